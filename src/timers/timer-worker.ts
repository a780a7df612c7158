import { unmeasuredTurn } from '../core/turn-record.ts';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { Timer } from '../core/timer.ts';
import { describeError } from '../core/errors.ts';
import type { IdGenerator } from '../core/clock.ts';
import type { TurnRecord, TurnStatus } from '../core/domain.ts';
import type { Store } from '../store/store.ts';
import type { TimerContext, TimerKind, TimerKindRegistry, TimerUsage } from './timer-kinds.ts';
import { failpoint } from '../core/failpoint.ts';
import { TimerCompletions } from './timer-completions.ts';

export interface TimerWorkerOptions {
  store: Pick<
    Store,
    | 'transaction'
    | 'claimDueTimers'
    | 'completeTimer'
    | 'extendTimerLease'
    | 'failTimer'
    | 'getTimer'
    | 'insertTurn'
    | 'nextTimerDue'
  >;
  kinds: TimerKindRegistry;
  clock: Clock;
  /** Ids of the firings' turn records. */
  ids: IdGenerator;
  logger: Logger;
  /**
   * Runs a firing in its conversation's turn queue (the engine's `exclusive`): a timer's work
   * never overlaps a turn or another timer of the same conversation, whatever its kind does.
   */
  serialize: <T>(conversationId: string, work: () => Promise<T>) => Promise<T>;
  /**
   * How long a claim is held unless renewed (every third of it while the handler runs) before another worker may
   * re-run it (ms).
   */
  leaseMs?: number;
  maxAttempts?: number;
  batchSize?: number;
  /**
   * How many conversations' timers of a batch fire side by side (8): each firing may be a model
   * call and holds a database connection while it commits.
   */
  concurrency?: number;
  /** The longest real pause between looks at the table (ms), so timers written by another process are seen. */
  pollIntervalMs?: number;
}

/** Timers by conversation, each conversation's in the order given. */
function byConversation(timers: readonly Timer[]): Map<string, Timer[]> {
  const groups = new Map<string, Timer[]>();
  for (const timer of timers) {
    const group = groups.get(timer.conversationId);
    if (group) group.push(timer);
    else groups.set(timer.conversationId, [timer]);
  }
  return groups;
}

const COMMITTED: Promise<void> = Promise.resolve();

/** Makes the turn record of a firing once its outcome is known. */
type Recorder = (status: TurnStatus, error: string | null, usage?: TimerUsage) => TurnRecord;

/** Delay before retrying a failed timer: 5 s, 10 s, 20 s … capped at 10 minutes. */
export function timerRetryDelayMs(attempts: number): number {
  return Math.min(5000 * 2 ** Math.max(0, attempts - 1), 600_000);
}

/**
 * Fires due timers: claims them (expired leases included, so a crashed process's claims are
 * re-run), runs the handler of their kind, records the outcome. Never early: a timer is claimed
 * only when the clock has reached its due time.
 */
export class TimerWorker {
  readonly #options: TimerWorkerOptions;
  readonly #completions: TimerCompletions;
  readonly #abort = new AbortController();
  #wake: (() => void) | null = null;
  #loop: Promise<void> | null = null;
  /** Wall time of the worker's last sign of life: a pass begun, a timer fired (`/health`). */
  #lastProgressAt: number | null = null;

  constructor(options: TimerWorkerOptions) {
    this.#options = options;
    this.#completions = new TimerCompletions(options.store);
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Whether the loop runs (not with a virtual clock), and when it last moved (wall time). */
  get progress(): { running: boolean; lastProgressAt: Date | null } {
    const running = this.#loop !== null && !this.#abort.signal.aborted;
    return { running, lastProgressAt: this.#lastProgressAt === null ? null : new Date(this.#lastProgressAt) };
  }

  /** A timer was written: look again now. */
  kick(): void {
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    this.#wake?.();
    await this.#loop;
  }

  /** Claims and runs every timer due at the clock's now, until none is left. Returns how many ran. */
  async fireDue(): Promise<number> {
    let fired = 0;
    for (;;) {
      const { store, clock } = this.#options;
      const now = clock.now();
      const claimed = await store.claimDueTimers(
        now,
        this.#options.batchSize ?? 50,
        new Date(now.getTime() + this.#leaseMs),
      );
      if (claimed.length === 0) return fired;
      failpoint('timer.after-claim');
      fired += await this.#fireBatch(claimed, now, clock.now().getTime());
      if (this.#abort.signal.aborted) return fired;
    }
  }

  /**
   * A claimed batch: each conversation's timers in due order, up to `concurrency` conversations'
   * side by side, so a study's prompts due at the same minute do not wait for one another's model
   * calls and commits. A lane moves on to its next conversation while the last firing's outcome
   * commits (firings with nothing to do share commits: `TimerCompletions`); the batch ends when
   * every outcome is committed. How many fired; the first failure is thrown once all have settled.
   */
  async #fireBatch(claimed: readonly Timer[], now: Date, claimedAt: number): Promise<number> {
    const groups = [...byConversation(claimed).values()];
    const committing: Promise<void>[] = [];
    let next = 0;
    const lane = async () => {
      let fired = 0;
      while (next < groups.length) {
        const run = await this.#fireInOrder(groups[next++]!, now, claimedAt);
        committing.push(run.committed);
        fired += run.fired;
      }
      return fired;
    };
    const lanes = Math.min(groups.length, this.#options.concurrency ?? 8);
    const settled = await Promise.allSettled(Array.from({ length: lanes }, lane));
    const outcomes = await Promise.allSettled(committing);
    let fired = 0;
    for (const outcome of settled) if (outcome.status === 'fulfilled') fired += outcome.value;
    const failures = [...settled, ...outcomes].flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason as unknown] : [],
    );
    for (const error of failures.slice(1)) this.#options.logger.error({ err: error }, 'timer firing failed');
    if (failures.length > 0) throw failures[0];
    return fired;
  }

  /**
   * One conversation's claimed timers, one after another: each fires once the one before it is
   * committed. How many fired before a stop, and the commit of the last one's outcome.
   */
  async #fireInOrder(
    timers: readonly Timer[],
    now: Date,
    claimedAt: number,
  ): Promise<{ fired: number; committed: Promise<void> }> {
    let fired = 0;
    let committed = COMMITTED;
    for (const timer of timers) {
      if (this.#abort.signal.aborted) break;
      await committed;
      ({ committed } = await this.#fire(timer, now, claimedAt));
      this.#lastProgressAt = Date.now();
      fired += 1;
    }
    return { fired, committed };
  }

  async #run(): Promise<void> {
    while (!this.#abort.signal.aborted) {
      this.#lastProgressAt = Date.now();
      try {
        await this.fireDue();
        await this.#sleepUntilNext();
      } catch (error) {
        this.#options.logger.error({ err: error }, 'timer worker pass failed');
        await this.#pause(1000);
      }
    }
  }

  async #sleepUntilNext(): Promise<void> {
    const next = await this.#options.store.nextTimerDue();
    const poll = this.#options.pollIntervalMs ?? 1000;
    const wait = next ? Math.max(0, Math.min(poll, next.getTime() - this.#options.clock.now().getTime())) : poll;
    await this.#pause(wait);
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = () => {
        this.#wake = null;
        done();
      };
    });
  }

  get #leaseMs(): number {
    return this.#options.leaseMs ?? 15_000;
  }

  /** Runs one timer's handler; resolves once it ran, with the commit of its outcome (a promise kept apart). */
  async #fire(timer: Timer, now: Date, claimedAt: number): Promise<{ committed: Promise<void> }> {
    const { store, kinds, clock } = this.#options;
    const kind = kinds.get(timer.kind);
    // A claim that waited long in the batch may have expired and gone to another process: then
    // it is theirs. A fresh one is still well within its lease and needs no round trip.
    const until = () => new Date(clock.now().getTime() + this.#leaseMs);
    const aged = clock.now().getTime() - claimedAt > this.#leaseMs / 3;
    if (aged && !(await store.extendTimerLease(timer.id, timer.attempts, until()))) return { committed: COMMITTED };
    const renewal = setInterval(() => {
      void store.extendTimerLease(timer.id, timer.attempts, until()).catch(() => undefined);
    }, this.#leaseMs / 3);
    renewal.unref();
    const record = this.#recorder(timer);
    let completed = false;
    try {
      if (!kind) throw new Error(`no handler for timer kind "${timer.kind}"`);
      const payload = kind.payload.parse(timer.payload);
      const context: TimerContext = {
        now,
        signal: this.#abort.signal,
        retryAt: this.#isLastAttempt(kind, timer) ? null : this.#retryAt(timer),
        complete: async (tx, usage) => {
          await tx.completeTimer(timer.id, clock.now());
          await tx.insertTurn(record('completed', null, usage));
          completed = true;
        },
      };
      await this.#options.serialize(timer.conversationId, () => kind.handle(timer, payload, context));
      if (completed) return { committed: COMMITTED };
      // Nothing was left to do (the participant paused, the reminder was answered): done all the
      // same, in a commit shared with other lanes' such firings.
      const committed = this.#completions
        .complete({ timerId: timer.id, at: clock.now(), record: () => record('completed', null) })
        .catch((error: unknown) => this.#failed(timer, kind, now, record, error));
      return { committed };
    } catch (error) {
      await this.#failed(timer, kind, now, record, error);
      return { committed: COMMITTED };
    } finally {
      clearInterval(renewal);
    }
  }

  /** A firing that failed: retried later, or failed for good after its kind's last word. */
  async #failed(timer: Timer, kind: TimerKind | undefined, now: Date, record: Recorder, error: unknown): Promise<void> {
    const final = !kind || (this.#isLastAttempt(kind, timer) && (await this.#giveUp(kind, timer, now)));
    const retryAt = final ? null : this.#retryAt(timer);
    await this.#options.store.transaction(async (tx) => {
      await tx.failTimer(timer.id, describeError(error), retryAt);
      // Gone with its conversation (a participant deleted meanwhile): nothing to record it against.
      if (await tx.getTimer(timer.id)) await tx.insertTurn(record('failed', describeError(error)));
    });
    this.#options.logger.warn(
      { timerId: timer.id, kind: timer.kind, attempts: timer.attempts, final, err: error },
      'timer failed',
    );
  }

  /** The turn record of one firing: started now, finished when it is written. */
  #recorder(timer: Timer): Recorder {
    const { clock, ids } = this.#options;
    const startedAt = clock.now();
    const started = performance.now();
    return (status, error, usage) =>
      unmeasuredTurn({
        id: ids.next('turn'),
        conversationId: timer.conversationId,
        inboxId: null,
        trigger: 'timer',
        module: timer.kind,
        status,
        modelCalls: usage?.modelCalls ?? 0,
        modelMs: Math.round(usage?.modelMs ?? 0),
        totalMs: Math.round(performance.now() - started),
        error,
        startedAt,
        finishedAt: clock.now(),
        attempts: timer.attempts,
      });
  }

  #isLastAttempt(kind: TimerKind, timer: Timer): boolean {
    return timer.attempts >= (kind.maxAttempts ?? this.#options.maxAttempts ?? 5);
  }

  #retryAt(timer: Timer): Date {
    return new Date(this.#options.clock.now().getTime() + timerRetryDelayMs(timer.attempts));
  }

  /** The kind's last word on a timer that failed for good; false when that failed too (retry later). */
  async #giveUp(kind: TimerKind, timer: Timer, now: Date): Promise<boolean> {
    if (!kind.giveUp) return true;
    const payload = kind.payload.safeParse(timer.payload);
    if (!payload.success) return true; // nothing to act on: the timer itself is malformed
    try {
      await this.#options.serialize(timer.conversationId, () =>
        kind.giveUp!(timer, payload.data, {
          now,
          signal: this.#abort.signal,
          retryAt: null,
          // A give-up leaves the timer to be marked failed, with the firing's failed record.
          complete: () => Promise.resolve(),
        }),
      );
      return true;
    } catch (error) {
      this.#options.logger.error(
        { timerId: timer.id, kind: timer.kind, err: error },
        'timer give-up failed; it will be retried',
      );
      return false;
    }
  }
}
