import type { MessageSource } from '../../core/domain.ts';
import { AppError, isAppError } from '../../core/errors.ts';
import type { OutgoingDraft } from '../../engine/outgoing.ts';
import { donePoll } from '../../flows/habit-coach/polls.ts';
import type { LlmProvider } from '../../llm/llm-provider.ts';
import {
  generateCustomText,
  type CustomGenerator,
  type CustomPrompt,
  type CustomPromptContext,
} from './custom-generator.ts';
import type { GoPrompt, PromptContent } from './go-schemas.ts';

/** What the Go server's conversation generator sent for a `conversation` prompt. */
export const CONVERSATION_PROMPT_TEXT = "I'm ready to chat! Send me a message to start our conversation.";

/** Go measured lengths in bytes (`len` of a UTF-8 string). */
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

function refuse(field: string, message: string): never {
  throw new AppError('invalid_request', `${field}: ${message}`, { field });
}

/**
 * The Go server's `Prompt.Validate` for each type, same rules and order, naming the field. Two
 * refusals are ours: `custom` without a generator (Go accepted it, then answered 500 or, on a
 * schedule, never sent) and `genai` without a model (the offline demo model would send its own
 * canned text). What a custom prompt needs is its generator's to say (`checkCustomPrompt`).
 */
export function checkPrompt(prompt: PromptContent, can: { realModel: boolean; customGenerator: boolean }): void {
  if (prompt.type === 'static') {
    if (!prompt.body) refuse('body', 'is required for static prompts');
    if (bytes(prompt.body) > 4096) refuse('body', 'exceeds the maximum length (4096 bytes)');
  }
  if (prompt.type === 'genai') {
    if (!prompt.system_prompt) refuse('system_prompt', 'is required for genai prompts');
    if (!prompt.user_prompt) refuse('user_prompt', 'is required for genai prompts');
    if (!can.realModel)
      refuse('type', 'genai prompts need a model: this server runs the offline demo model (set LLM_API_KEY)');
  }
  if (prompt.type === 'branch') checkBranch(prompt.branch_options ?? []);
  if (prompt.type === 'conversation') {
    if (!prompt.user_prompt) refuse('user_prompt', 'is required for conversation prompts');
    if (prompt.state && prompt.state !== 'CONVERSATION_ACTIVE')
      refuse('state', `"${prompt.state}" is not a conversation state (leave it out, or CONVERSATION_ACTIVE)`);
  }
  if (prompt.type === 'custom' && !can.customGenerator)
    refuse(
      'type',
      'custom prompts need a generator: set PLATFORM_CUSTOM_GENERATOR to a module exporting generate(prompt, context)',
    );
}

function checkBranch(options: NonNullable<GoPrompt['branch_options']>): void {
  if (options.length === 0) refuse('branch_options', 'are required for branch prompts');
  if (options.length < 2) refuse('branch_options', 'need at least 2 options');
  if (options.length > 10) refuse('branch_options', 'may have at most 10 options');
  options.forEach((option, index) => {
    const at = `branch_options.${index}`;
    if (!option.label) refuse(`${at}.label`, 'cannot be empty');
    if (bytes(option.label) > 100) refuse(`${at}.label`, 'exceeds the maximum length (100 bytes)');
    if (!option.body) refuse(`${at}.body`, 'cannot be empty');
    if (bytes(option.body) > 1000) refuse(`${at}.body`, 'exceeds the maximum length (1000 bytes)');
  });
}

/** Go's `Branch.Generate`: the body, the numbered options, and how to answer. */
export function branchText(body: string, options: ReadonlyArray<{ label: string; body: string }>): string {
  if (options.length === 0) return body;
  let text = body.length > 0 && !body.endsWith('\n') ? `${body}\n` : body;
  text += '\n';
  options.forEach((option, index) => (text += `${index + 1}. ${option.label}: ${option.body}\n`));
  const numbers = options.map((_, index) => `'${index + 1}'`);
  const last = numbers.pop()!;
  return `${text}\n(Reply with ${numbers.join(', ')}${numbers.length > 1 ? ',' : ''} or ${last})`;
}

/**
 * What a checked prompt sends, in order. Static and generated prompts carry the "Did you do it?"
 * poll, as Go's `SendPromptWithButtons` did (the habit coach counts a "Done" to it); branch and
 * conversation prompts go alone.
 */
export async function composePrompt(
  prompt: PromptContent,
  deps: {
    provider: LlmProvider;
    source: MessageSource;
    signal?: AbortSignal;
    /** For a custom prompt: its generator, and whom and when it writes for. */
    custom?: { generator: CustomGenerator | undefined; to: string; context: Omit<CustomPromptContext, 'signal'> };
  },
): Promise<OutgoingDraft[]> {
  const withPoll = (text: string): OutgoingDraft[] => [
    { text, source: deps.source },
    { text: donePoll().question, kind: 'poll', poll: donePoll(), source: deps.source },
  ];
  switch (prompt.type) {
    case 'static':
      return withPoll(prompt.body!);
    case 'branch':
      return [{ text: branchText(prompt.body ?? '', prompt.branch_options ?? []), source: deps.source }];
    case 'conversation':
      return [{ text: CONVERSATION_PROMPT_TEXT, source: deps.source }];
    case 'genai':
      return withPoll(await generate(prompt, deps));
    case 'custom': {
      const generator = deps.custom?.generator;
      if (!generator || !deps.custom)
        throw new AppError('invalid_request', 'type: custom prompts need a generator (PLATFORM_CUSTOM_GENERATOR)', {
          field: 'type',
        });
      const text = await generateCustomText(generator, customPrompt(prompt, deps.custom.to), {
        ...deps.custom.context,
        signal: deps.signal,
      });
      return withPoll(text); // Go sent a custom prompt with the poll, as any prompt but branch and conversation
    }
  }
}

/** A custom prompt as its generator gets it: the request's fields (those given) and the E.164 recipient. */
export function customPrompt(prompt: PromptContent, to: string): CustomPrompt {
  const { state, body, system_prompt, user_prompt, branch_options } = prompt;
  return Object.fromEntries(
    Object.entries({ to, type: 'custom', state, body, system_prompt, user_prompt, branch_options }).filter(
      ([, value]) => value !== undefined,
    ),
  ) as unknown as CustomPrompt;
}

async function generate(prompt: PromptContent, deps: { provider: LlmProvider; signal?: AbortSignal }): Promise<string> {
  try {
    const response = await deps.provider.complete(
      {
        messages: [
          { role: 'system', content: prompt.system_prompt! },
          { role: 'user', content: prompt.user_prompt! },
        ],
      },
      { signal: deps.signal },
    );
    const text = response.text.trim();
    if (!text) throw new AppError('llm_bad_response', 'the model answered with no text', { fault: 'model' });
    return text;
  } catch (error) {
    if (!isAppError(error)) throw error;
    throw new AppError(error.code, `Failed to generate message content: ${error.message}`, {
      fault: error.fault,
      retryable: error.retryable,
      cause: error,
    });
  }
}
