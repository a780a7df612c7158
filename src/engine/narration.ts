import type { LlmToolCall } from '../llm/llm-provider.ts';
import type { ExecutedToolCall } from './tool-loop.ts';

/**
 * What a live audience (the session event stream) hears of one turn while it runs. The engine
 * reports; the narration decides what to show. Every method is cheap and never throws.
 */
export interface TurnNarration {
  modelCallStarted(): void;
  /** The flow's replies may be code or JSON (an assistant showing a config file): stream them as they come. */
  allowCode(): void;
  textDelta(delta: string): void;
  toolStarted(call: LlmToolCall): void;
  toolFinished(executed: ExecutedToolCall): void;
  /** Latency so far, for the turn record: from the turn's start to the first token / status. */
  metrics(): { firstTokenMs: number | null; timeToStatusMs: number | null };
  /** After the turn committed: announce what it wrote, stop speaking. */
  committed(turnId: string): Promise<void>;
  /** The turn was interrupted (barge-in) or failed before committing: stop speaking. */
  /** `code`: why a failed turn failed (an error code), for the `error` event a client shows. */
  cancelled(reason: 'interrupted' | 'failed', code?: string): Promise<void>;
}

export interface Narrator {
  /**
   * `replyMessageId` is the id the turn's reply will be stored under, so streamed tokens and the
   * final match; `inboxId` names the message the turn answers (null for greetings and timers).
   */
  begin(conversationId: string, replyMessageId: string, inboxId: string | null): Promise<TurnNarration>;
}
