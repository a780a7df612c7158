import type { Message } from '../core/domain.ts';

/** A conversation's recent history as of its message `through` (its last seq, system notes included). */
export interface KnownHistory {
  readonly through: number;
  readonly messages: readonly Message[];
}

export interface HistoryCacheOptions {
  /** Messages kept per conversation: the turn's history window. */
  window: number;
  /** Conversations kept at most; the least recently used goes first. */
  maxConversations?: number;
  /** Characters of message text kept at most over all conversations (messages may be long). */
  maxChars?: number;
}

interface Entry extends KnownHistory {
  chars: number;
}

/**
 * The recent history of the conversations this process ran turns for, so that a turn reads its
 * history only when something else changed the transcript since (decision 020: what a turn just
 * wrote is not read back). An entry is only ever used together with the conversation's last seq,
 * read in the turn's context statement: transcripts are append-only, so an equal seq means the
 * same messages, whichever process appended them. Bounded by conversations and by characters.
 */
export class HistoryCache {
  readonly #window: number;
  readonly #maxConversations: number;
  readonly #maxChars: number;
  /** In least-recently-used-first order (a Map keeps insertion order). */
  readonly #entries = new Map<string, Entry>();
  #chars = 0;

  constructor({ window, maxConversations = 500, maxChars = 2_000_000 }: HistoryCacheOptions) {
    this.#window = window;
    this.#maxConversations = maxConversations;
    this.#maxChars = maxChars;
  }

  get(conversationId: string): KnownHistory | undefined {
    const entry = this.#entries.get(conversationId);
    if (!entry) return undefined;
    this.#entries.delete(conversationId);
    this.#entries.set(conversationId, entry);
    return entry;
  }

  /** The conversation's history as of `through`, as read from the store. */
  remember(conversationId: string, through: number, messages: readonly Message[]): void {
    this.forget(conversationId);
    const kept = Object.freeze(messages.slice(-this.#window));
    const chars = kept.reduce((sum, message) => sum + message.text.length, 0);
    if (chars > this.#maxChars) return;
    this.#entries.set(conversationId, { through, messages: kept, chars });
    this.#chars += chars;
    this.#trim();
  }

  /**
   * Messages a turn committed, numbered right after `after`: appended to the entry known through
   * `after` (system notes count in the seq but stay out of the history). Anything else (no entry,
   * another seq, a gap) drops the entry: the next turn reads the history again.
   */
  extend(conversationId: string, after: number, appended: readonly Message[]): void {
    const entry = this.#entries.get(conversationId);
    const contiguous = appended.every((message, index) => message.seq === after + index + 1);
    if (!entry || entry.through !== after || !contiguous) return this.forget(conversationId);
    const visible = appended.filter((message) => message.role !== 'system');
    this.remember(conversationId, after + appended.length, [...entry.messages, ...visible]);
  }

  forget(conversationId: string): void {
    const entry = this.#entries.get(conversationId);
    if (!entry) return;
    this.#entries.delete(conversationId);
    this.#chars -= entry.chars;
  }

  #trim(): void {
    for (const [id] of this.#entries) {
      if (this.#entries.size <= this.#maxConversations && this.#chars <= this.#maxChars) return;
      this.forget(id);
    }
  }
}
