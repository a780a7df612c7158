import type { Logger } from 'pino';
import type { Store } from '../store/store.ts';

export interface EventFollowersOptions {
  store: Pick<Store, 'followEvents' | 'unfollowEvents'>;
  /** This process, as the leases name it. */
  owner: string;
  /** Wall time (never the virtual clock). */
  now: () => Date;
  /** Reads what other processes wrote to the conversation's log since this one last looked. */
  catchUp: (conversationId: string) => Promise<void>;
  logger: Logger;
  /** How long a row stands without renewal; renewed at a third of it. */
  ttlMs?: number;
}

const DEFAULT_TTL_MS = 60_000;

/**
 * The conversations someone in this process follows, kept in `event_followers` (decision 020):
 * another process's turn commit notifies only when a row says a process follows the
 * conversation. Registering takes the conversation's row lock, so every commit either sees the
 * row or is over before it: after registering, one catch-up reads what the latter wrote. Rows
 * are renewed well before they lapse; should renewals fail for longer (the database away), the
 * next one that succeeds catches up every conversation. Changes run one at a time, in order.
 */
export class EventFollowers {
  readonly #options: Required<EventFollowersOptions>;
  readonly #followed = new Set<string>();
  readonly #timer: NodeJS.Timeout;
  #chain: Promise<void> = Promise.resolve();
  /** Until when the rows written last stand (ms); past it, other processes may have stopped notifying. */
  #standsUntil = 0;

  constructor(options: EventFollowersOptions) {
    this.#options = { ttlMs: DEFAULT_TTL_MS, ...options };
    this.#timer = setInterval(() => this.#renew(), this.#options.ttlMs / 3);
    this.#timer.unref();
  }

  /** The conversation got its first subscriber in this process (true), or lost its last (false). */
  set(conversationId: string, following: boolean): void {
    if (following) {
      if (this.#followed.has(conversationId)) return;
      this.#followed.add(conversationId);
      this.#queue(() => this.#register([conversationId], [conversationId]));
    } else if (this.#followed.delete(conversationId)) {
      this.#queue(() => this.#options.store.unfollowEvents(conversationId, this.#options.owner));
    }
  }

  /** Stops renewing and removes this process's rows (best effort: they lapse anyway). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    const followed = [...this.#followed];
    this.#followed.clear();
    for (const id of followed) this.#queue(() => this.#options.store.unfollowEvents(id, this.#options.owner));
    await this.#chain;
  }

  #renew(): void {
    if (this.#followed.size === 0) return;
    this.#queue(() => {
      const all = [...this.#followed];
      // Lapsed meanwhile: commits elsewhere may have gone untold.
      const lapsed = this.#options.now().getTime() >= this.#standsUntil;
      return this.#register(all, lapsed ? all : []);
    });
  }

  /** Writes the rows, then reads what commits that ran before them wrote to `catchUp`'s conversations. */
  async #register(ids: string[], catchUp: string[]): Promise<void> {
    const until = this.#options.now().getTime() + this.#options.ttlMs;
    await this.#options.store.followEvents(ids, this.#options.owner, new Date(until));
    this.#standsUntil = until;
    await Promise.all(catchUp.filter((id) => this.#followed.has(id)).map((id) => this.#options.catchUp(id)));
  }

  #queue(work: () => Promise<void>): void {
    this.#chain = this.#chain.then(work).catch((error: unknown) => {
      this.#standsUntil = 0; // the next renewal catches everything up
      this.#options.logger.warn({ err: error }, 'event followers not updated');
    });
  }
}
