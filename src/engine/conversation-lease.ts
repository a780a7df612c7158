import type { Logger } from 'pino';
import { AppError } from '../core/errors.ts';
import type { Store } from '../store/store.ts';

export interface LeaseHooks {
  /** Runs once the lease is held, before the work (the event log reloads its head here). */
  acquired?(conversationId: string): Promise<void>;
  /** Runs before the lease is let go (the event log writes behind what it holds here). */
  releasing?(conversationId: string): Promise<void>;
}

export interface ConversationLeasesOptions {
  store: Pick<Store, 'acquireLease' | 'renewLease' | 'releaseLease'>;
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
  /** How long a lease lasts unless renewed; renewed every third of it while the work makes progress. */
  ttlMs?: number;
  /**
   * How long the work may go without reporting progress (`HeldLease.progress`) before the lease
   * is no longer renewed, so that another process can take the conversation over from a holder
   * that is stuck (default 5 minutes). Longer than the slowest legitimate step: a model call with
   * its retries.
   */
  stallMs?: number;
  /** First pause between attempts while another process holds the lease (it doubles, up to `maxRetryMs`). */
  retryMs?: number;
  maxRetryMs?: number;
  hooks?: LeaseHooks;
  /** Called once this process has let go of a conversation (to tell the other processes). */
  released?: (conversationId: string) => void;
  /**
   * How long a lease is kept after its work ended, for the conversation's next turn (sticky
   * leases, decision 020): no take, no release, no notice per turn. Let go sooner when another
   * process asks for it (`wanted`). 0 = let go at once. Default: a third of `ttlMs`.
   */
  keepMs?: number;
  /** Called when another process holds a lease this one waits for (to ask it to let go when idle). */
  wanted?: (conversationId: string) => void;
}

/** What the work under a lease sees of it. */
export interface HeldLease {
  /** The work moved forward (a model call, a tool call, a commit): the lease may be renewed again. */
  progress(): void;
  /** Aborted when the lease turned out to be someone else's: stop before the next step. */
  readonly lost: AbortSignal;
  /** Which taking of the lease this is (`ConversationLeases.heldSince`); none when nothing is shared. */
  readonly taken?: number;
}

const NOT_SHARED: HeldLease = { progress: () => undefined, lost: new AbortController().signal };

/**
 * Work on one conversation, serialised across processes by a lease row (decision 004). Within a
 * process the engine's keyed queue already runs one job per conversation; the lease extends that
 * to every process on the database.
 */
export class ConversationLeases {
  readonly #options: Required<Omit<ConversationLeasesOptions, 'hooks' | 'released'>> &
    Pick<ConversationLeasesOptions, 'hooks' | 'released'>;
  /** Waiters for a lease another process holds, woken early when it says it let go. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** "Let go" notices per conversation, so one that lands between a refused take and the wait is not lost. */
  readonly #releases = new Map<string, number>();
  /** Until when (ms, the lease clock) each lease this process took or renewed lasts. */
  readonly #until = new Map<string, number>();
  /** Leases kept after their work ended, each with the timer that lets it go. */
  readonly #kept = new Map<string, NodeJS.Timeout>();
  /** Conversations another process asked for while this one worked on them: let go when the work ends. */
  readonly #asked = new Set<string>();
  /** Each lease held here, numbered when taken (kept and renewed, it keeps its number). */
  readonly #taken = new Map<string, number>();
  /** Leases being let go: work on the conversation waits for that before it takes the lease again. */
  readonly #lettingGo = new Map<string, Promise<void>>();
  #takings = 0;

  constructor(options: ConversationLeasesOptions) {
    this.#options = {
      ttlMs: 10_000,
      stallMs: 300_000,
      retryMs: 50,
      maxRetryMs: 1000,
      keepMs: (options.ttlMs ?? 10_000) / 3,
      wanted: () => undefined,
      ...options,
    };
  }

  get ttlMs(): number {
    return this.#options.ttlMs;
  }

  /** True when other processes share the store (PostgreSQL): work on a conversation may happen elsewhere. */
  get shared(): boolean {
    return this.#options.shared;
  }

  /**
   * The number of the lease this process holds on the conversation now (working or kept), if any.
   * Work that later holds a lease with the same number held it all along: no other process can
   * have touched the conversation in between.
   */
  heldSince(conversationId: string): number | undefined {
    return this.#taken.get(conversationId);
  }

  /**
   * Runs `work` holding the conversation's lease. The lease is renewed while the work reports
   * progress; a holder silent for `stallMs` stops renewing it, and once it lapses another process
   * may take over (a commit of the stalled one is then refused).
   */
  async hold<T>(conversationId: string, work: (lease: HeldLease) => Promise<T>, signal: AbortSignal): Promise<T> {
    if (!this.#options.shared) return work(NOT_SHARED);
    const { hooks = {}, ttlMs, keepMs } = this.#options;
    // A release still on its way would delete the row under a take made meanwhile.
    const lettingGo = this.#lettingGo.get(conversationId);
    if (lettingGo) await lettingGo;
    const resumed = this.#resume(conversationId);
    const kept = resumed === 'renew' ? await this.#renew(conversationId) : resumed === 'kept';
    if (!kept) await this.#acquire(conversationId, signal);
    const renewer = this.#renewer(conversationId, this.#taken.get(conversationId));
    const renewal = setInterval(renewer.tick, ttlMs / 3);
    renewal.unref();
    try {
      // Kept since its last work: nobody else wrote to the conversation meanwhile.
      if (!kept) await hooks.acquired?.(conversationId);
      return await work(renewer.lease);
    } finally {
      clearInterval(renewal);
      if (keepMs > 0 && !renewer.lease.lost.aborted && !this.#asked.delete(conversationId)) this.#keep(conversationId);
      else await this.#letGo(conversationId);
    }
  }

  /**
   * Another process waits for this conversation: a lease kept idle is let go now, one in use when
   * its work ends.
   */
  wantedElsewhere(conversationId: string): void {
    if (this.#kept.has(conversationId)) void this.#letGo(conversationId);
    else if (this.#until.has(conversationId)) this.#asked.add(conversationId);
  }

  /** Lets go of every lease kept idle (at shutdown). */
  async releaseKept(): Promise<void> {
    await Promise.all([...this.#kept.keys()].map((conversationId) => this.#letGo(conversationId)));
  }

  /**
   * Whether the lease kept from the last work can serve this one: `kept`, as it is, when it lasts
   * long enough; `renew` when past half its time; else (none kept, or about to lapse) `take`.
   */
  #resume(conversationId: string): 'kept' | 'renew' | 'take' {
    const timer = this.#kept.get(conversationId);
    if (!timer) return 'take';
    clearTimeout(timer);
    this.#kept.delete(conversationId);
    const { ttlMs } = this.#options;
    const left = (this.#until.get(conversationId) ?? 0) - this.#options.now().getTime();
    if (left > ttlMs / 2) return 'kept';
    // A margin for the clocks of other processes, which read the lease's end with theirs.
    return left > ttlMs / 5 ? 'renew' : 'take';
  }

  /**
   * Renews a kept lease whose row is still this process's: nobody else took it meanwhile, so it
   * keeps its number (and the conversation needs no catching up). False when the row is gone or
   * another's: take it anew.
   */
  async #renew(conversationId: string): Promise<boolean> {
    if (!this.#taken.has(conversationId)) return false;
    try {
      return await this.#extend(conversationId);
    } catch (error) {
      this.#forget(conversationId);
      throw error;
    }
  }

  /** Extends the lease this process holds, if its row is still this process's; forgets it if not. */
  async #extend(conversationId: string): Promise<boolean> {
    const until = this.#options.now().getTime() + this.#options.ttlMs;
    const held = await this.#options.store.renewLease(conversationId, this.#options.owner, new Date(until));
    if (held) this.#until.set(conversationId, until);
    else this.#forget(conversationId);
    return held;
  }

  #forget(conversationId: string): void {
    this.#until.delete(conversationId);
    this.#taken.delete(conversationId);
  }

  #keep(conversationId: string): void {
    const timer = setTimeout(() => void this.#letGo(conversationId), this.#options.keepMs);
    timer.unref();
    this.#kept.set(conversationId, timer);
  }

  #letGo(conversationId: string): Promise<void> {
    const timer = this.#kept.get(conversationId);
    if (timer) clearTimeout(timer);
    this.#kept.delete(conversationId);
    this.#forget(conversationId);
    const release = this.#release(conversationId).finally(() => {
      if (this.#lettingGo.get(conversationId) === release) this.#lettingGo.delete(conversationId);
    });
    this.#lettingGo.set(conversationId, release);
    return release;
  }

  async #release(conversationId: string): Promise<void> {
    const { hooks = {}, logger, store, owner } = this.#options;
    await hooks
      .releasing?.(conversationId)
      .catch((error: unknown) => logger.warn({ conversationId, err: error }, 'lease release hook failed'));
    const letGo = await store.releaseLease(conversationId, owner).then(
      () => true,
      () => false,
    ); // it expires anyway
    if (letGo) this.#options.released?.(conversationId);
  }

  /** Renews the lease on each tick unless the work has been silent for `stallMs`. */
  #renewer(conversationId: string, taken: number | undefined): { tick: () => void; lease: HeldLease } {
    const { ttlMs, stallMs, logger } = this.#options;
    const maxSilentRenewals = Math.max(1, Math.ceil(stallMs / (ttlMs / 3)));
    const lost = new AbortController();
    let silentRenewals = 0;
    const tick = () => {
      if (lost.signal.aborted) return;
      if (silentRenewals >= maxSilentRenewals) {
        if (silentRenewals++ === maxSilentRenewals)
          logger.warn(
            { conversationId, stallMs },
            'conversation work made no progress: its lease is no longer renewed, another process may take over',
          );
        return;
      }
      silentRenewals++;
      this.#extend(conversationId).then(
        (held) => {
          if (held) return;
          logger.error({ conversationId }, 'conversation lease lost while working; the commit will be refused');
          lost.abort(
            new AppError('conflict', `the lease of conversation ${conversationId} was taken over`, { fault: 'system' }),
          );
        },
        (error: unknown) => logger.warn({ conversationId, err: error }, 'conversation lease not renewed'),
      );
    };
    return { tick, lease: { progress: () => void (silentRenewals = 0), lost: lost.signal, taken } };
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
        if (await this.#take(conversationId)) {
          this.#taken.set(conversationId, ++this.#takings);
          return;
        }
        signal.throwIfAborted();
        if (attempt === 0) this.#options.wanted(conversationId); // kept idle there: ask for it
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

  async #take(conversationId: string): Promise<boolean> {
    const now = this.#options.now();
    const until = now.getTime() + this.#options.ttlMs;
    const held = await this.#options.store.acquireLease(conversationId, this.#options.owner, now, new Date(until));
    if (held) this.#until.set(conversationId, until);
    else this.#forget(conversationId);
    return held;
  }
}
