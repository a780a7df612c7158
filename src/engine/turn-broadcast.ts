import type { Message, StoredEvent } from '../core/domain.ts';
import type { LlmToolCall } from '../llm/llm-provider.ts';
import type { ApprovalRequest } from './flow.ts';
import type { ExecutedToolCall } from './tool-loop.ts';

/**
 * What a live audience (the session event stream) hears of one turn while it runs. The engine
 * reports; the broadcast decides what to show. Every method is cheap and never throws.
 */
export interface TurnBroadcast {
  modelCallStarted(): void;
  /** The flow's replies may be code or JSON (an assistant showing a config file): stream them as they come. */
  allowCode(): void;
  textDelta(delta: string): void;
  toolStarted(call: LlmToolCall): void;
  toolFinished(executed: ExecutedToolCall): void;
  /** A tool call waits for a person's yes (decision 022). */
  approvalRequested(request: ApprovalRequest): void;
  /** Latency so far, for the turn record: from the turn's start to the first token / status. */
  metrics(): { firstTokenMs: number | null; timeToStatusMs: number | null };
  /**
   * Runs the turn's commit so that its events go into the same transaction: `work` calls
   * `announce` with the messages it appends and writes the events it returns (the turn's own,
   * a `final` per reply, `speaking: false`); they reach live listeners once `work` resolved.
   * `followedElsewhere`, asked once `work` resolved: false when the commit found that no other
   * process follows the conversation, so none needs telling (undefined: not asked, tell them).
   */
  commit<T>(work: (announce: AnnounceEvents) => Promise<T>, followedElsewhere?: () => boolean | undefined): Promise<T>;
  /** After a commit that did not announce (nothing of the turn was kept): announce what was written, stop speaking. */
  committed(turnId: string): Promise<void>;
  /** The turn was interrupted (barge-in) or failed before committing: stop speaking. */
  /** `code`: why a failed turn failed (an error code), for the `error` event a client shows. */
  cancelled(reason: 'interrupted' | 'failed', code?: string): Promise<void>;
}

export interface TurnBroadcaster {
  /**
   * `replyMessageId` is the id the turn's reply will be stored under, so streamed tokens and the
   * final match; `inboxId` names the message the turn answers (null for greetings and timers).
   */
  begin(conversationId: string, replyMessageId: string, inboxId: string | null): Promise<TurnBroadcast>;
}

/** Given the messages a turn's commit appends, the session events that commit must write (decision 020). */
export type AnnounceEvents = (messages: readonly Message[]) => StoredEvent[];
