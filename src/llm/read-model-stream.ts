import type { LanguageModelV3StreamPart, LanguageModelV3Usage } from '@ai-sdk/provider';
import { InvalidResponseDataError, TypeValidationError } from '@ai-sdk/provider';
import { failureFromErrorEvent, isMalformedData, LlmAttemptError } from './llm-failure.ts';
import type { LlmFinishReason, LlmResponse, LlmToolCall, LlmUsage } from './llm-provider.ts';

export interface StreamReadContext {
  /** Aborting it stops the read at once, rejecting with the signal's reason. */
  signal: AbortSignal;
  onTextDelta?: (delta: string) => void;
  /** Flipped to true once text has been handed to `onTextDelta`. */
  delivery: { textDelivered: boolean };
  /** The model id to report when the server names none. */
  fallbackModel: string;
}

/** An exception thrown by the caller's `onTextDelta`: passed through as is, never retried. */
export class TextDeltaCallbackError extends Error {
  constructor(cause: unknown) {
    super('onTextDelta threw', { cause });
    this.name = 'TextDeltaCallbackError';
  }
}

interface Accumulator {
  text: string;
  reasoning: string;
  toolCalls: LlmToolCall[];
  model: string;
  finishReason?: LlmFinishReason;
  usage?: LlmUsage;
  endedWithoutFinishReason: boolean;
}

/** Reads the AI SDK stream parts of one attempt into a response. */
export async function readModelStream(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  context: StreamReadContext,
): Promise<LlmResponse> {
  const reader = stream.getReader();
  const accumulator: Accumulator = {
    text: '',
    reasoning: '',
    toolCalls: [],
    model: context.fallbackModel,
    endedWithoutFinishReason: false,
  };
  try {
    for (;;) {
      const next = await readUnlessAborted(reader, context.signal);
      if (next.done) break;
      applyPart(next.value, accumulator, context);
    }
  } finally {
    // Closes the HTTP response when we stop early (error chunk, abort).
    reader.cancel().catch(() => undefined);
  }
  return toResponse(accumulator);
}

function readUnlessAborted<T>(
  reader: ReadableStreamDefaultReader<T>,
  signal: AbortSignal,
): ReturnType<ReadableStreamDefaultReader<T>['read']> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    reader
      .read()
      .then(resolve, (error: unknown) => reject(readFailure(error)))
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function readFailure(error: unknown): unknown {
  if (isMalformedData(error))
    return new LlmAttemptError({
      kind: 'bad-response',
      message: `malformed stream from the model server: ${(error as Error).message}`,
      cause: error,
    });
  return new LlmAttemptError({
    kind: 'stream-interrupted',
    message: `the model stream broke: ${describe(error)}`,
    cause: error,
  });
}

function applyPart(part: LanguageModelV3StreamPart, accumulator: Accumulator, context: StreamReadContext): void {
  switch (part.type) {
    case 'response-metadata':
      if (part.modelId) accumulator.model = part.modelId;
      return;
    case 'text-delta':
      accumulator.text += part.delta;
      deliverText(part.delta, context);
      return;
    case 'reasoning-delta':
      accumulator.reasoning += part.delta;
      return;
    case 'tool-call':
      accumulator.toolCalls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input });
      return;
    case 'finish':
      accumulator.finishReason = part.finishReason.unified;
      accumulator.usage = toUsage(part.usage) ?? accumulator.usage;
      return;
    case 'error':
      absorbErrorPart(part.error, accumulator);
      return;
    default:
      return;
  }
}

function deliverText(delta: string, context: StreamReadContext): void {
  if (delta === '' || !context.onTextDelta) return;
  context.delivery.textDelivered = true;
  try {
    context.onTextDelta(delta);
  } catch (error) {
    throw new TextDeltaCallbackError(error);
  }
}

/** Error parts: some are recoverable quirks, the rest end the attempt. */
function absorbErrorPart(error: unknown, accumulator: Accumulator): void {
  const usage = usageOnlyChunk(error);
  if (usage) {
    // vLLM and others may send the usage chunk with `choices` null or missing, which the SDK's schema rejects.
    accumulator.usage = usage;
    return;
  }
  if (InvalidResponseDataError.isInstance(error) && /without a finish reason/i.test(error.message)) {
    accumulator.endedWithoutFinishReason = true;
    return;
  }
  if (isMalformedData(error)) {
    throw new LlmAttemptError({
      kind: 'bad-response',
      message: `malformed chunk from the model server: ${describe(error)}`,
      cause: error,
    });
  }
  throw new LlmAttemptError(failureFromErrorEvent(error));
}

function usageOnlyChunk(error: unknown): LlmUsage | undefined {
  if (!TypeValidationError.isInstance(error)) return undefined;
  const value = error.value as {
    choices?: unknown;
    usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  } | null;
  if (!value || typeof value !== 'object' || Array.isArray(value.choices) || !value.usage) return undefined;
  const { prompt_tokens: input, completion_tokens: output } = value.usage;
  if (typeof input !== 'number' && typeof output !== 'number') return undefined;
  return { inputTokens: typeof input === 'number' ? input : 0, outputTokens: typeof output === 'number' ? output : 0 };
}

function toUsage(usage: LanguageModelV3Usage): LlmUsage | undefined {
  const input = usage.inputTokens.total;
  const output = usage.outputTokens.total;
  if (input === undefined && output === undefined) return undefined;
  return { inputTokens: input ?? 0, outputTokens: output ?? 0 };
}

function toResponse(accumulator: Accumulator): LlmResponse {
  if (accumulator.endedWithoutFinishReason || accumulator.finishReason === undefined) {
    throw new LlmAttemptError({
      kind: 'stream-interrupted',
      message: 'the model stream ended before its finish chunk',
    });
  }
  const { text, reasoning, toolCalls, model, usage } = accumulator;
  // Ollama reports "stop" for messages that carry tool calls.
  const finishReason =
    toolCalls.length > 0 && accumulator.finishReason === 'stop' ? 'tool-calls' : accumulator.finishReason;
  return { text, toolCalls, finishReason, model, ...(reasoning ? { reasoning } : {}), ...(usage ? { usage } : {}) };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
