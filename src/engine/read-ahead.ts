import type { HeldLease } from './conversation-lease.ts';
import type { TurnContext } from '../store/store.ts';

/** How long a read ahead stays usable: its turn starts at once, or the turn reads again. */
const USABLE_MS = 1000;
/** Reads ahead remembered at most (ones whose turn never came are dropped with the rest). */
const MAX_KEPT = 1000;

/** A turn's context read ahead of its turn, and the history (its last seq) it was read against. */
export interface EarlyContext {
  readonly knownThrough: number | undefined;
  /** When the read was started (`Date.now()`). */
  readonly at: number;
  /** Null when the read failed. */
  readonly read: Promise<TurnContext | undefined | null>;
}

/**
 * Context reads started for a conversation's next turn while its message is being recorded
 * (decision 020): on PostgreSQL the read goes beside the acknowledgement instead of in a round
 * trip of its own after it. Started only while this process holds the conversation's lease and
 * no turn runs or waits here (`Engine.readAhead`), so that nothing but that next turn can change
 * the conversation; a lease taken anew meanwhile (another number) means another process may have,
 * and the turn reads again. The conversation's next turn takes the read, used or not, and uses it
 * only within a second of it; work queued with `Engine.exclusive` (a timer, a platform route),
 * which may write the conversation first, drops it.
 */
export class ReadAhead {
  readonly #reads = new Map<string, { lease: number; context: EarlyContext }>();

  start(conversationId: string, lease: number, read: () => EarlyContext): void {
    if (this.#reads.size >= MAX_KEPT) this.#reads.clear();
    this.#reads.set(conversationId, { lease, context: read() });
  }

  /** The read for the turn starting on the conversation under `lease`, if it is still good. */
  take(conversationId: string, lease: HeldLease): EarlyContext | undefined {
    const ahead = this.#reads.get(conversationId);
    this.#reads.delete(conversationId);
    if (!ahead || ahead.lease !== lease.taken || lease.lost.aborted) return undefined;
    return Date.now() - ahead.context.at < USABLE_MS ? ahead.context : undefined;
  }

  /** Drops the conversation's read: work that may write it (not a turn) runs before the turn. */
  forget(conversationId: string): void {
    this.#reads.delete(conversationId);
  }
}
