import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../../config/config-error.ts';
import { AppError, describeError } from '../../core/errors.ts';

/**
 * A `type: "custom"` prompt as the generator sees it: the request's own fields, as Go's
 * `flow.Generator` got its `models.Prompt`; `to` is the participant's E.164 number.
 */
export interface CustomPrompt {
  to: string;
  type: 'custom';
  state?: string | undefined;
  body?: string | undefined;
  system_prompt?: string | undefined;
  user_prompt?: string | undefined;
  branch_options?: Array<{ label: string; body: string }> | undefined;
}

export interface CustomPromptContext {
  participantId: string;
  /** Set when a `POST /schedule` series fires. */
  scheduleId?: string | undefined;
  now: Date;
  /** Aborted when the server shuts down or the generator has run for GENERATE_TIMEOUT_MS. */
  signal: AbortSignal;
}

/** A refusal: the request field it is about and why (→ 400 `invalid_request` naming the field). */
export interface CustomPromptProblem {
  field: string;
  message: string;
}

/**
 * The module `PLATFORM_CUSTOM_GENERATOR` names: the counterpart of the Go server's generator
 * registered for `custom` in code. `check` (optional) refuses a request before anything is sent
 * or scheduled; `generate` writes the text, when `POST /send` is called and each time a series
 * fires.
 */
export interface CustomGenerator {
  check?(
    prompt: CustomPrompt,
  ): CustomPromptProblem | undefined | void | Promise<CustomPromptProblem | undefined | void>;
  generate(prompt: CustomPrompt, context: CustomPromptContext): string | Promise<string>;
}

/** Go bounded a scheduled send's generation by 30 s (`DefaultScheduledJobTimeout`); so does every call here. */
export const GENERATE_TIMEOUT_MS = 30_000;
/** Go's largest prompt body (`MaxPromptBodyLength`), in bytes. */
const MAX_TEXT_BYTES = 4096;
const VARIABLE = 'PLATFORM_CUSTOM_GENERATOR';

/** Imports the module at `path` (relative to the working directory), or stops start-up saying why. */
export async function loadCustomGenerator(path: string): Promise<CustomGenerator> {
  const file = resolve(path);
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
  } catch (error) {
    throw new ConfigError([`${VARIABLE}: cannot read ${path} (${describeError(error)})`]);
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError([`${VARIABLE}: cannot load ${path} as a module (${describeError(error)})`]);
  }
  if (typeof module.generate !== 'function')
    throw new ConfigError([`${VARIABLE}: ${path} exports no generate(prompt, context) function`]);
  if (module.check !== undefined && typeof module.check !== 'function')
    throw new ConfigError([`${VARIABLE}: ${path} exports a check that is not a function`]);
  return module as unknown as CustomGenerator;
}

/** The generator's `check`: its refusal as a 400 naming the field; a malformed answer is its fault (500). */
export async function checkCustomPrompt(generator: CustomGenerator, prompt: CustomPrompt): Promise<void> {
  if (!generator.check) return;
  let problem: unknown;
  try {
    problem = await generator.check(prompt);
  } catch (error) {
    throw failed("the custom generator's check threw", error);
  }
  if (problem === undefined || problem === null) return;
  const { field, message } = problem as Partial<CustomPromptProblem>;
  if (typeof field !== 'string' || !/^[a-z_][a-z0-9_.]{0,99}$/.test(field) || typeof message !== 'string')
    throw failed(
      "the custom generator's check answered neither nothing nor {field, message} (a request field and a text)",
    );
  throw new AppError('invalid_request', `${field}: ${message.slice(0, 500)}`, { field });
}

/** The generator's text for one send: a non-empty string of at most 4,096 bytes, within the time allowed. */
export async function generateCustomText(
  generator: CustomGenerator,
  prompt: CustomPrompt,
  context: Omit<CustomPromptContext, 'signal'> & { signal?: AbortSignal | undefined },
): Promise<string> {
  const signal = AbortSignal.any([
    AbortSignal.timeout(GENERATE_TIMEOUT_MS),
    ...(context.signal ? [context.signal] : []),
  ]);
  let text: unknown;
  try {
    // A generator that ignores its signal is not waited for past it.
    text = await new Promise<unknown>((resolve, reject) => {
      const abort = () => reject(signal.reason as Error);
      if (signal.aborted) return abort();
      signal.addEventListener('abort', abort, { once: true });
      Promise.resolve()
        .then(() => generator.generate(prompt, { ...context, signal }))
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', abort));
    });
  } catch (error) {
    const why = context.signal?.aborted
      ? 'was stopped (the server is shutting down)'
      : signal.aborted
        ? `did not answer in time (${GENERATE_TIMEOUT_MS / 1000} s)`
        : 'threw';
    throw failed(`the custom generator ${why}`, error);
  }
  if (typeof text !== 'string')
    throw failed(`the custom generator returned ${text === null ? 'null' : typeof text}, not a string`);
  const trimmed = text.trim();
  if (!trimmed) throw failed('the custom generator returned no text');
  const bytes = Buffer.byteLength(trimmed, 'utf8');
  if (bytes > MAX_TEXT_BYTES)
    throw failed(`the custom generator returned ${bytes} bytes of text, more than ${MAX_TEXT_BYTES}`);
  return trimmed;
}

/** Go answered 500 "Failed to generate message content"; the generator's own error goes to the log (its cause). */
function failed(why: string, cause?: unknown): AppError {
  return new AppError('custom_generator_failed', `Failed to generate message content: ${why}`, {
    fault: 'system',
    retryable: true,
    cause,
  });
}
