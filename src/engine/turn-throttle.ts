import type { Clock } from '../core/clock.ts';

/**
 * How often one conversation's messages (one sender's) may start model turns. The engine decides
 * what becomes of the messages that wait: they pile up in the inbox and one turn answers them all.
 */
export interface TurnThrottle {
  /**
   * Takes a turn for the conversation: `free` when one was available at once, `waited` when it had
   * to wait for one (`onWait` is told when the wait begins). Rejects with the signal's reason if it
   * aborts while waiting.
   */
  take(conversationId: string, signal: AbortSignal, onWait?: () => void): Promise<'free' | 'waited'>;
}

export interface SlidingWindowThrottleOptions {
  /** Turns per conversation in any window. */
  limit: number;
  windowMs: number;
  /** Wall time, never the conversation clock: a virtual clock would hold messages until it is moved. */
  clock: Clock;
}

/** How many takes between sweeps of conversations that have been quiet for a whole window. */
const SWEEP_EVERY = 1000;

/** At most `limit` turns per conversation in any `windowMs`: in memory, per process (decision 010). */
export class SlidingWindowThrottle implements TurnThrottle {
  readonly #options: SlidingWindowThrottleOptions;
  /** Start times of each conversation's turns within the last window, oldest first. */
  readonly #starts = new Map<string, number[]>();
  #takes = 0;

  constructor(options: SlidingWindowThrottleOptions) {
    this.#options = options;
  }

  async take(conversationId: string, signal: AbortSignal, onWait?: () => void): Promise<'free' | 'waited'> {
    const { limit, windowMs, clock } = this.#options;
    if (++this.#takes % SWEEP_EVERY === 0) this.#sweep(clock.now().getTime());
    for (let waited = false; ; waited = true) {
      const now = clock.now().getTime();
      const recent = (this.#starts.get(conversationId) ?? []).filter((startedAt) => startedAt > now - windowMs);
      this.#starts.set(conversationId, recent);
      if (recent.length < limit) {
        recent.push(now);
        return waited ? 'waited' : 'free';
      }
      if (!waited) onWait?.();
      await clock.sleep(recent[0]! + windowMs - now, signal);
    }
  }

  /** Conversations with no turn in the last window are forgotten (memory stays bounded by the active ones). */
  #sweep(now: number): void {
    for (const [conversationId, starts] of this.#starts) {
      if ((starts.at(-1) ?? 0) <= now - this.#options.windowMs) this.#starts.delete(conversationId);
    }
  }
}
