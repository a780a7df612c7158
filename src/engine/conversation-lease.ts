import type { Logger } from 'pino';
import { describeError } from '../core/errors.ts';
import type { Store } from '../store/store.ts';

export interface LeaseHooks {
  /** Runs once the lease is held, before the work (the event log reloads its head here). */
  acquired?(conversationId: string): Promise<void>;
  /** Runs before the lease is let go (the event log writes behind what it holds here). */
  releasing?(conversationId: string): Promise<void>;
}

export interface ConversationLeasesOptions {
  store: Store;
  /**
   * False when only this process can use the store (SQLite): the engine's keyed queue already
   * serialises a conversation's work, and no lease is taken.
   */
  shared: boolean;
  /** This process, unique among those sharing the database. */
  owner: string;
  /** Wall-clock time for lease expiry (the database's in PostgreSQL mode), never the virtual clock. */
  now: () => Date;
  logger: Logger;
  /** How long a lease lasts unless renewed; renewed every third of it while the work runs. */
  ttlMs?: number;
  /** Pause between attempts while another process holds the lease. */
  retryMs?: number;
  hooks?: LeaseHooks;
}

/**
 * Work on one conversation, serialised across processes by a lease row (decision 004). Within a
 * process the engine's keyed queue already runs one job per conversation; the lease extends that
 * to every process on the database.
 */
export class ConversationLeases {
  readonly #options: Required<Omit<ConversationLeasesOptions, 'hooks'>> & { hooks: LeaseHooks };

  constructor(options: ConversationLeasesOptions) {
    this.#options = { ttlMs: 10_000, retryMs: 50, hooks: {}, ...options };
  }

  get ttlMs(): number {
    return this.#options.ttlMs;
  }

  async hold<T>(conversationId: string, work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (!this.#options.shared) return work();
    await this.#acquire(conversationId, signal);
    const { hooks, ttlMs, logger } = this.#options;
    const renewal = setInterval(() => {
      this.#take(conversationId).then(
        (held) => held || logger.error({ conversationId }, 'conversation lease lost while working; the commit will be refused'),
        (error: unknown) => logger.warn({ conversationId, err: describeError(error) }, 'conversation lease not renewed'),
      );
    }, ttlMs / 3);
    renewal.unref();
    try {
      await hooks.acquired?.(conversationId);
      return await work();
    } finally {
      clearInterval(renewal);
      await hooks.releasing?.(conversationId).catch((error: unknown) => logger.warn({ conversationId, err: describeError(error) }, 'lease release hook failed'));
      await this.#options.store.releaseLease(conversationId, this.#options.owner).catch(() => undefined); // it expires anyway
    }
  }

  async #acquire(conversationId: string, signal: AbortSignal): Promise<void> {
    for (let attempt = 0; !(await this.#take(conversationId)); attempt++) {
      signal.throwIfAborted();
      // Another process is working on it (or died holding it): wait, a little longer each time.
      const pause = Math.min(this.#options.retryMs * 2 ** Math.min(attempt, 4), 1000) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  #take(conversationId: string): Promise<boolean> {
    const now = this.#options.now();
    return this.#options.store.acquireLease(conversationId, this.#options.owner, now, new Date(now.getTime() + this.#options.ttlMs));
  }
}
