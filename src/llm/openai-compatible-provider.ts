import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { AppError } from '../core/errors.ts';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { callTimeoutError, failureFromError, LlmAttemptError, toAppError } from './llm-failure.ts';
import type { LlmCallOptions, LlmProvider, LlmRequest, LlmResponse } from './llm-provider.ts';
import { readModelStream, TextDeltaCallbackError } from './read-model-stream.ts';
import type { RetryPolicy } from './retry-policy.ts';
import { decideRetry, defaultRetryPolicy } from './retry-policy.ts';
import { toModelPrompt, toModelTools } from './to-model-prompt.ts';

export interface RetryInfo {
  /** The attempt that failed (1-based). */
  attempt: number;
  /** How long we wait before the next attempt. */
  delayMs: number;
  /** What the failure would have been reported as, had no retry been left. */
  error: AppError;
}

export interface OpenAiCompatibleProviderOptions {
  /** Up to the version segment: `https://api.openai.com/v1`, `http://localhost:11434/v1`. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Sampling temperature of calls that do not set their own; undefined = the server's default. */
  temperature?: number;
  /** Budget for the whole `complete()` call, retries and waits included. Default 60 000. */
  timeoutMs?: number;
  /** An attempt with no bytes from the server for this long is abandoned. Default 30 000. */
  idleTimeoutMs?: number;
  /** Retries after the first attempt. Default 2. */
  maxRetries?: number;
  /** Used for the waits between attempts. */
  clock?: Clock;
  fetch?: typeof fetch;
  onRetry?: (info: RetryInfo) => void;
  /** Backoff tuning; `random` makes the jitter deterministic in tests. */
  backoff?: Partial<Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'maxRetryAfterMs' | 'random'>>;
}

interface Settings {
  options: OpenAiCompatibleProviderOptions;
  timeoutMs: number;
  idleTimeoutMs: number;
  clock: Clock;
  policy: RetryPolicy;
}

interface CallState {
  request: LlmRequest;
  signal: AbortSignal;
  onTextDelta?: (delta: string) => void;
  delivery: { textDelivered: boolean };
}

/**
 * Any server speaking OpenAI chat completions with streaming (OpenAI, OpenRouter, Ollama,
 * vLLM, llama.cpp). Transport and SSE parsing are the AI SDK's; retries, timeouts and error
 * codes are ours (the SDK's own retry lives in `generateText`, which we do not use).
 */
export function createOpenAiCompatibleProvider(options: OpenAiCompatibleProviderOptions): LlmProvider {
  const clock = options.clock ?? systemClock;
  const settings: Settings = {
    options,
    timeoutMs: options.timeoutMs ?? 60_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    clock,
    policy: {
      ...defaultRetryPolicy,
      ...options.backoff,
      maxRetries: options.maxRetries ?? defaultRetryPolicy.maxRetries,
      now: () => clock.now().getTime(),
    },
  };
  return {
    name: 'openai-compatible',
    model: options.model,
    complete: (request, callOptions) => completeWithDeadline(settings, request, callOptions ?? {}),
  };
}

async function completeWithDeadline(
  settings: Settings,
  request: LlmRequest,
  callOptions: LlmCallOptions,
): Promise<LlmResponse> {
  const caller = callOptions.signal;
  caller?.throwIfAborted();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('call timeout')), settings.timeoutMs);
  const signal = caller ? AbortSignal.any([caller, deadline.signal]) : deadline.signal;
  const state: CallState = {
    request,
    signal,
    onTextDelta: callOptions.onTextDelta,
    delivery: { textDelivered: false },
  };
  try {
    return await completeWithRetries(settings, state);
  } catch (error) {
    if (caller?.aborted) throw caller.reason;
    if (deadline.signal.aborted) throw callTimeoutError(settings.timeoutMs, error);
    if (error instanceof TextDeltaCallbackError) throw error.cause;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function completeWithRetries(settings: Settings, state: CallState): Promise<LlmResponse> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runAttempt(settings, state);
    } catch (error) {
      if (state.signal.aborted || error instanceof TextDeltaCallbackError) throw error;
      const failure = { ...failureFromError(error), afterText: state.delivery.textDelivered };
      const decision = decideRetry(failure, attempt, settings.policy);
      if (!decision.retry) throw toAppError(failure, attempt);
      settings.options.onRetry?.({ attempt, delayMs: decision.delayMs, error: toAppError(failure, attempt) });
      await settings.clock.sleep(decision.delayMs, state.signal);
    }
  }
}

/** One HTTP request and its stream, abandoned when the server goes quiet for `idleTimeoutMs`. */
async function runAttempt(settings: Settings, state: CallState): Promise<LlmResponse> {
  const idle = new AbortController();
  const watchdog = createWatchdog(settings.idleTimeoutMs, () => idle.abort(new Error('idle timeout')));
  const signal = AbortSignal.any([state.signal, idle.signal]);
  const modelId = state.request.model ?? settings.options.model;
  try {
    watchdog.touch();
    const model = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: settings.options.baseUrl,
      apiKey: settings.options.apiKey,
      includeUsage: true,
      fetch: watchedFetch(settings.options.fetch ?? globalThis.fetch, watchdog.touch),
    }).chatModel(modelId);
    const { stream } = await model.doStream({
      prompt: toModelPrompt(state.request.messages),
      tools: toModelTools(state.request.tools),
      temperature: state.request.temperature ?? settings.options.temperature,
      maxOutputTokens: state.request.maxOutputTokens,
      abortSignal: signal,
    });
    return await readModelStream(stream, {
      signal,
      onTextDelta: state.onTextDelta,
      delivery: state.delivery,
      fallbackModel: modelId,
    });
  } catch (error) {
    if (idle.signal.aborted && !state.signal.aborted) throw idleFailure(settings.idleTimeoutMs, error);
    throw error;
  } finally {
    watchdog.stop();
  }
}

function idleFailure(idleTimeoutMs: number, cause: unknown): LlmAttemptError {
  return new LlmAttemptError({
    kind: 'idle-timeout',
    message: `the model server sent nothing for ${idleTimeoutMs} ms`,
    cause,
  });
}

function createWatchdog(ms: number, onIdle: () => void) {
  let timer: NodeJS.Timeout | undefined;
  return {
    touch: () => {
      clearTimeout(timer);
      timer = setTimeout(onIdle, ms);
    },
    stop: () => clearTimeout(timer),
  };
}

/** Counts every byte from the server (keep-alive comments included) as a sign of life. */
function watchedFetch(baseFetch: typeof fetch, onActivity: () => void): typeof fetch {
  return async (input, init) => {
    const response = await baseFetch(input, init);
    onActivity();
    if (!response.body) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          onActivity();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
