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
  /** First pause between attempts while another process holds the lease (it doubles, up to `maxRetryMs`). */
  retryMs?: number;
  maxRetryMs?: number;
  hooks?: LeaseHooks;
  /** Called once this process has let go of a conversation (to tell the other processes). */
  released?: (conversationId: string) => void;
}

/**
 * Work on one conversation, serialised across processes by a lease row (decision 004). Within a
 * process the engine's keyed queue already runs one job per conversation; the lease extends that
 * to every process on the database.
 */
export class ConversationLeases {
  readonly #options: Required<Omit<ConversationLeasesOptions, 'hooks' | 'released'>> & Pick<ConversationLeasesOptions, 'hooks' | 'released'>;
  /** Waiters for a lease another process holds, woken early when it says it let go. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** "Let go" notices per conversation, so one that lands between a refused take and the wait is not lost. */
  readonly #releases = new Map<string, number>();

  constructor(options: ConversationLeasesOptions) {
    this.#options = { ttlMs: 10_000, retryMs: 50, maxRetryMs: 1000, ...options };
  }

  get ttlMs(): number {
    return this.#options.ttlMs;
  }

  async hold<T>(conversationId: string, work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (!this.#options.shared) return work();
    await this.#acquire(conversationId, signal);
    const { hooks = {}, ttlMs, logger } = this.#options;
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
      const letGo = await this.#options.store.releaseLease(conversationId, this.#options.owner).then(() => true, () => false); // it expires anyway
      if (letGo) this.#options.released?.(conversationId);
    }
  }

  /** Another process let go of the conversation: whoever here waits for it tries again now. */
  wake(conversationId: string): void {
    const seen = this.#releases.get(conversationId);
    if (seen !== undefined) this.#releases.set(conversationId, seen + 1);
    for (const resolve of this.#waiters.get(conversationId) ?? []) resolve();
  }

  async #acquire(conversationId: string, signal: AbortSignal): Promise<void> {
    // Only one job per conversation acquires at a time in a process (the engine's keyed queue).
    this.#releases.set(conversationId, 0);
    try {
      for (let attempt = 0; ; attempt++) {
        const releasesBefore = this.#releases.get(conversationId);
        if (await this.#take(conversationId)) return;
        signal.throwIfAborted();
        if (this.#releases.get(conversationId) !== releasesBefore) continue; // let go while we asked: ask again
        // Another process is working on it (or died holding it): wait, a little longer each time,
        // or until it says it let go.
        const { retryMs, maxRetryMs } = this.#options;
        const pause = Math.min(retryMs * 2 ** Math.min(attempt, 4), maxRetryMs) * (0.5 + Math.random());
        await this.#pause(conversationId, pause);
      }
    } finally {
      this.#releases.delete(conversationId);
    }
  }

  #pause(conversationId: string, ms: number): Promise<void> {
    const waiters = this.#waiters.get(conversationId) ?? new Set<() => void>();
    this.#waiters.set(conversationId, waiters);
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(conversationId) === waiters) this.#waiters.delete(conversationId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  #take(conversationId: string): Promise<boolean> {
    const now = this.#options.now();
    return this.#options.store.acquireLease(conversationId, this.#options.owner, now, new Date(now.getTime() + this.#options.ttlMs));
  }
}
