/**
 * The port every model sits behind: an OpenAI-compatible endpoint, the offline demo model,
 * the scripted model of the tests. Messages and tool calls are plain data; tool arguments stay
 * the raw JSON text the model produced, so the tool layer can report malformed ones to the model.
 */
export type LlmMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: LlmToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface LlmToolCall {
  id: string;
  name: string;
  /** The arguments exactly as the model produced them (JSON text, possibly malformed). */
  arguments: string;
}

export interface LlmToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  messages: LlmMessage[];
  tools?: LlmToolSpec[];
  /** Overrides the provider's configured model for this call. */
  model?: string;
  temperature?: number;
  maxOutputTokens?: number;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

export type LlmFinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

export interface LlmResponse {
  text: string;
  /**
   * The model's reasoning (`reasoning_content`, `reasoning`), when it sent any: never shown to a person, never sent
   * back.
   */
  reasoning?: string;
  toolCalls: LlmToolCall[];
  finishReason: LlmFinishReason;
  usage?: LlmUsage;
  /** Which model answered, as the provider reported it. */
  model: string;
}

export interface LlmCallOptions {
  signal?: AbortSignal;
  /** Called with each piece of text as it streams in, before the call resolves. */
  onTextDelta?: (delta: string) => void;
}

export interface LlmProvider {
  /** A stable, honest name for logs and the UI: `openai-compatible`, `offline-demo`, `scripted`. */
  readonly name: string;
  /** The default model id this provider calls. */
  readonly model: string;
  /**
   * Runs one model call to completion (streaming internally when the provider can).
   * Throws an `AppError` with code `llm_unavailable` (retryable outage), `llm_rejected`
   * (auth, payment, bad request: never retried), `llm_timeout` or `llm_bad_response`.
   */
  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse>;
}
