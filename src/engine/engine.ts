import type { Logger } from 'pino';
import type { InboxItem } from '../core/domain.ts';
import { AppError, isAppError, isModelUnavailable, isStoreUnavailable } from '../core/errors.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Store } from '../store/store.ts';
import type { TurnInput } from './flow.ts';
import type { ChangeFeed } from './change-feed.ts';
import type { ConversationLeases, HeldLease } from './conversation-lease.ts';
import { KeyedQueue } from './keyed-queue.ts';
import { ReadAhead } from './read-ahead.ts';
import type { OutboxDispatcher } from './outbox-dispatcher.ts';
import type { TurnRunner, TurnSummary } from './turn-runner.ts';
import type { TurnThrottle } from './turn-throttle.ts';

/** A queued turn that did not run here, and why: every outcome is named (issue #19). */
export interface TurnNotRun {
  status: 'not-run';
  /**
   * `answered-elsewhere`: another process (or an earlier job) answered the message; `lease-lost`:
   * another process took the conversation over; `shutting-down`: left pending for the next start;
   * `gave-up`: it failed for good, and its sender got the apology with a failed turn record.
   */
  reason: 'answered-elsewhere' | 'lease-lost' | 'shutting-down' | 'gave-up';
}
export type TurnResult = TurnSummary | TurnNotRun;
const notRun = (reason: TurnNotRun['reason']): TurnNotRun => ({ status: 'not-run', reason });

export interface EngineDeps {
  store: Pick<Store, 'listPendingInbox' | 'listPendingInboxOf'>;
  runner: TurnRunner;
  dispatcher: OutboxDispatcher;
  clock: Clock;
  logger: Logger;
  /** Serialises work on a conversation across processes (decision 004). */
  leases: ConversationLeases;
  /** Told after each piece of work on a conversation settles. */
  changes?: ChangeFeed;
  /** Attempts of a turn that throws (a version conflict, a bug) before its message is given up (kept, apology sent). */
  turnAttempts?: number;
  /** How long a turn keeps retrying while the database or the model is unreachable (real ms; default 10 minutes). */
  outageWaitMs?: number;
  /** Sent once per model outage to a person whose message waits for the model; undefined = none. */
  modelOutageNotice?: string;
  /** Limits how often a conversation's messages start turns; unset = no limit. */
  throttle?: TurnThrottle;
}

/** Pending items of a conversation read per round of draining. */
const DRAIN_BATCH = 20;
/** Most messages one turn answers together (a burst over the sender's turn limit). */
const MAX_TOGETHER = 50;

/** What the recording of an inbox item knew about its place in the conversation. */
export interface InboxOrder {
  /** Nothing of the conversation was pending when it was recorded. */
  first?: boolean;
  /** The lease this process held on the conversation just before it was recorded (`leaseHeldSince`). */
  heldSince?: number;
}

/**
 * Runs turns: one at a time per conversation, in arrival order, different conversations in
 * parallel; across processes too, through the conversation lease. Every turn commits, then the
 * outbox is kicked.
 */
export class Engine {
  readonly #deps: EngineDeps;
  readonly #queue = new KeyedQueue();
  /** Conversations whose turn waits for the throttle (wall time: moving a virtual clock does not free it). */
  readonly #throttled = new Set<string>();
  /** Conversations told about the current model outage (once each, until one of their turns succeeds). */
  readonly #noticed = new Set<string>();
  readonly #shutdown = new AbortController();
  /** The interrupt switch of each conversation's running turn. */
  readonly #running = new Map<string, AbortController>();
  #accepting = true;
  /** Inbox items with a job queued in this process, so the sweep does not queue them twice. */
  readonly #queuedInbox = new Set<string>();
  #sweeper: NodeJS.Timeout | null = null;
  /** Turns `processInboxSoon` will queue on the next turn of the event loop. */
  #starting = 0;
  readonly #readAhead = new ReadAhead();

  constructor(deps: EngineDeps) {
    this.#deps = deps;
  }

  /**
   * Queues the turn for a recorded inbox item. Under the conversation's lease, every pending item
   * that arrived before it (whichever process received it) is answered first. Resolves when its
   * turn has committed, or with why it did not run here (another process answered it, a shutdown).
   */
  processInbox(item: InboxItem, options: InboxOrder = {}): Promise<TurnResult> {
    const conversationId = item.conversationId;
    if (!conversationId)
      throw new AppError('internal', `inbox item ${item.id} has no conversation`, { fault: 'system' });
    this.#queuedInbox.add(item.id);
    return this.#work(conversationId, (lease) =>
      this.#drainThrough(conversationId, item.id, lease, this.#known(item, options, lease)),
    ).finally(() => this.#queuedInbox.delete(item.id));
  }

  /**
   * The item itself when nothing of the conversation was pending before it and no other process
   * can have answered it since (one process on the store, or this process's lease held from
   * before it was recorded until now): the drain need not read the inbox first (decision 020).
   */
  #known(item: InboxItem, { first, heldSince }: InboxOrder, lease: HeldLease): InboxItem | undefined {
    if (first !== true) return undefined;
    if (!this.#deps.leases.shared) return item;
    return heldSince !== undefined && lease.taken === heldSince && !lease.lost.aborted ? item : undefined;
  }

  /**
   * Starts the context read of the conversation's next turn now, beside the recording of its
   * message (`ReadAhead`): only while this process holds the lease and no turn at all runs or
   * waits here. A second connection's statement costs CPU a busy process would rather spend on
   * turns; an idle one gives its next reply a round trip sooner.
   */
  readAhead(conversationId: string): void {
    const lease = this.#deps.leases.heldSince(conversationId);
    if (!this.#deps.leases.shared || lease === undefined || this.backlog > 0) return;
    this.#readAhead.start(conversationId, lease, () => this.#deps.runner.readContext(conversationId));
  }

  /**
   * Its rows were deleted (its participant removed): what this process keeps of it goes too, its
   * recent history and a context read ahead; of its replies, those not yet begun are dropped and
   * the one being sent is waited for.
   */
  forgetConversation(conversationId: string): Promise<void> {
    this.#readAhead.forget(conversationId);
    this.#deps.runner.forget(conversationId);
    return this.#deps.dispatcher.forget(conversationId);
  }

  /** The lease this process holds on the conversation now, if any (`InboxOrder.heldSince`). */
  leaseHeldSince(conversationId: string): number | undefined {
    return this.#deps.leases.heldSince(conversationId);
  }

  /**
   * `processInbox` on the next turn of the event loop, so that the caller's acknowledgement leaves
   * first even when the model answers at once (node:sqlite resolves without yielding). Counted in
   * `backlog` from now: a commit under way knows more turns are coming (group commit).
   */
  processInboxSoon(item: InboxItem, options: InboxOrder = {}): Promise<TurnResult> {
    this.#starting += 1;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.#starting -= 1;
      return this.processInbox(item, options);
    });
  }

  /** Queues an event turn (greeting, timer) for a conversation. */
  trigger(conversationId: string, input: Extract<TurnInput, { kind: 'event' }>): Promise<TurnResult> {
    return this.#work(conversationId, (lease) => this.#runWithRetries(conversationId, input, null, lease));
  }

  /** `trigger` without waiting for the turn: a failure is logged, never thrown. */
  queueEvent(conversationId: string, input: Extract<TurnInput, { kind: 'event' }>): void {
    void this.trigger(conversationId, input).catch((error: unknown) =>
      this.#deps.logger.error({ conversationId, trigger: input.trigger, err: error }, 'event turn failed'),
    );
  }

  /**
   * Runs `work` with the conversation to itself (its queue here, its lease everywhere), then
   * kicks the outbox and tells the change feed, unless `quiet`.
   */
  exclusive<T>(conversationId: string, work: () => Promise<T>, options: { quiet?: boolean } = {}): Promise<T> {
    return this.#queue.run(conversationId, async () => {
      this.#readAhead.forget(conversationId); // it may write what a turn's read ahead read
      try {
        return await this.#deps.leases.hold(conversationId, work, this.#shutdown.signal);
      } finally {
        if (!options.quiet) {
          void this.#deps.dispatcher.kick();
          this.#deps.changes?.publish(conversationId);
        }
      }
    });
  }

  /** Something was queued for the conversation outside a job: deliver it, tell the change feed. */
  notify(conversationId: string): void {
    void this.#deps.dispatcher.kick();
    this.#deps.changes?.publish(conversationId);
  }

  /**
   * Barge-in: ends the conversation's running turn without a reply (its message is kept).
   * False when no turn is running.
   */
  interrupt(conversationId: string): boolean {
    const running = this.#running.get(conversationId);
    if (!running || running.signal.aborted) return false;
    running.abort(new AppError('interrupted', 'the participant interrupted the reply'));
    return true;
  }

  /**
   * Queues the pending inbox items that have no job in this process (after a restart, when the
   * process that received them died, or when a turn failed without even recording that). With
   * `olderThanMs`, only items that waited at least that long (a sweep leaves fresh ones to their
   * receivers); without it, all of them, even those that seem to come from the future (a virtual
   * clock restarts at wall time). One job per conversation, for its last such item: its drain
   * answers the earlier ones first, in arrival order, and stops at one that still fails, which is
   * then tried once per sweep rather than once per message behind it.
   */
  async recover(olderThanMs?: number): Promise<number> {
    const cutoff = olderThanMs === undefined ? Infinity : this.#deps.clock.now().getTime() - olderThanMs;
    const pending = (await this.#deps.store.listPendingInbox(olderThanMs === undefined ? 100_000 : 1000)).filter(
      (item) => item.conversationId && !this.#queuedInbox.has(item.id) && item.receivedAt.getTime() <= cutoff,
    );
    const lastOfConversation = new Map(pending.map((item) => [item.conversationId, item]));
    for (const item of lastOfConversation.values()) {
      this.processInbox(item).catch((error: unknown) =>
        this.#deps.logger.error({ inboxId: item.id, err: error }, 'recovered turn failed'),
      );
    }
    if (pending.length > 0) this.#deps.logger.info({ count: pending.length }, 're-queued pending inbound messages');
    return pending.length;
  }

  /** Sweeps for orphaned inbox items every `intervalMs` (several processes on one database). */
  startSweeper(intervalMs: number): void {
    this.#sweeper = setInterval(() => {
      if (this.#accepting)
        void this.recover(intervalMs).catch((error: unknown) =>
          this.#deps.logger.warn({ err: error }, 'inbox sweep failed'),
        );
    }, intervalMs);
    this.#sweeper.unref();
  }

  /** Turns queued or running, and those about to be queued. */
  get backlog(): number {
    return this.#queue.size + this.#starting;
  }

  /**
   * Resolves when no turn runs, is queued, or is about to be queued (`processInboxSoon`); with
   * `exceptThrottled`, but for the conversations whose turn waits for the turn throttle.
   */
  async idle(options: { exceptThrottled?: boolean } = {}): Promise<void> {
    const ignore = options.exceptThrottled ? (key: string) => this.#throttled.has(key) : undefined;
    do {
      while (this.#starting > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      await this.#queue.idle(ignore);
    } while (this.#starting > 0);
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  /**
   * Stops accepting, waits up to `timeoutMs` for queued turns, then aborts the rest. Turns that
   * wait for the turn throttle are not waited for: their messages stay pending, answered after a
   * restart.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    this.#accepting = false;
    if (this.#sweeper) clearInterval(this.#sweeper);
    const timedOut = await Promise.race([
      this.#queue.idle((key) => this.#throttled.has(key)).then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), timeoutMs).unref()),
    ]);
    const reason = new AppError('shutting_down', 'the server is shutting down', { fault: 'system', retryable: true });
    if (timedOut) {
      this.#deps.logger.warn(
        { backlog: this.#queue.size },
        'shutdown timeout: aborting turns in progress; they re-run after restart',
      );
      // A running turn listens to its interrupt switch alone (`TurnSignals.interrupt`).
      for (const running of this.#running.values()) running.abort(reason);
    }
    // Ends the waits for the throttle too.
    this.#shutdown.abort(reason);
    await this.#queue.idle();
    await this.#deps.leases.releaseKept();
    await this.#deps.dispatcher.stop();
  }

  #work(conversationId: string, run: (lease: HeldLease) => Promise<TurnResult>): Promise<TurnResult> {
    return this.#queue.run(conversationId, async () => {
      if (this.#shutdown.signal.aborted) return notRun('shutting-down');
      const summary = await this.#deps.leases.hold(conversationId, run, this.#shutdown.signal);
      // A turn that handed its replies to the dispatcher left nothing for a claim to find.
      if (summary.status === 'not-run' || !summary.handedOff) void this.#deps.dispatcher.kick();
      this.#deps.changes?.publish(conversationId, 'turn');
      return summary;
    });
  }

  /**
   * Answers the conversation's pending items in arrival order up to and including `inboxId`, a turn
   * each; once the sender is over the turn limit, one turn answers every message that piled up.
   */
  async #drainThrough(
    conversationId: string,
    inboxId: string,
    lease: HeldLease,
    first?: InboxItem,
  ): Promise<TurnResult> {
    for (let round = 0; ; round++) {
      const pending =
        round === 0 && first ? [first] : await this.#deps.store.listPendingInboxOf(conversationId, DRAIN_BATCH);
      const target = pending.findIndex((item) => item.id === inboxId);
      if (target === -1 && pending.length < DRAIN_BATCH) return notRun('answered-elsewhere');
      for (const item of target === -1 ? pending : pending.slice(0, target + 1)) {
        // Taken over (this process stalled): the new holder answers the rest, in order.
        if (lease.lost.aborted) return notRun('lease-lost');
        const turn = await this.#takeTurn(conversationId);
        if (turn === 'stopped') return notRun('shutting-down');
        if (turn === 'waited') {
          const together = await this.#answerTogether(conversationId, lease);
          if (together.answered.includes(inboxId)) return together.summary;
          break; // more than one batch piled up before ours: read the inbox again
        }
        const summary = await this.#runWithRetries(
          conversationId,
          { kind: 'message', text: item.text, inboxId: item.id, ...traceOf(item) },
          item.id,
          lease,
        );
        if (item.id === inboxId) return summary;
        this.#deps.changes?.publish(conversationId, 'turn');
      }
    }
  }

  async #takeTurn(conversationId: string): Promise<'free' | 'waited' | 'stopped'> {
    if (this.#shutdown.signal.aborted) return 'stopped';
    if (!this.#deps.throttle) return 'free';
    const waiting = () => {
      this.#throttled.add(conversationId);
      this.#queue.recheck();
    };
    return this.#deps.throttle
      .take(conversationId, this.#shutdown.signal, waiting)
      .catch((error: unknown) => {
        if (this.#shutdown.signal.aborted) return 'stopped' as const; // left pending: answered after the restart
        throw error;
      })
      .finally(() => this.#throttled.delete(conversationId));
  }

  /** One turn for the conversation's pending messages (at most `MAX_TOGETHER`), oldest first. */
  async #answerTogether(
    conversationId: string,
    lease: HeldLease,
  ): Promise<{ summary: TurnResult; answered: string[] }> {
    const items = await this.#deps.store.listPendingInboxOf(conversationId, MAX_TOGETHER);
    const last = items.at(-1);
    if (!last) return { summary: notRun('answered-elsewhere'), answered: [] };
    const batch = items.map((item) => ({ inboxId: item.id, text: item.text }));
    const input: TurnInput = {
      kind: 'message',
      text: batch.map((message) => message.text).join('\n\n'),
      inboxId: last.id,
      ...(batch.length > 1 ? { batch } : {}),
      ...traceOf(last),
    };
    const summary = await this.#runWithRetries(conversationId, input, last.id, lease);
    this.#deps.changes?.publish(conversationId, 'turn');
    return { summary, answered: batch.map((message) => message.inboxId) };
  }

  /**
   * Runs a turn, retrying a failure twice (a version conflict, a provider hiccup). While the
   * database is unreachable it keeps waiting instead, up to `outageWaitMs`, and then throws,
   * leaving the message (and every later one of the conversation) pending for the sweep or the
   * next start: an outage never turns into a lost or reordered message.
   * A message that fails for good is kept, and its sender gets the apology. When even that cannot
   * be recorded (a full disk refuses every write) it throws too, for the same reason: the message
   * stays pending and the conversation's drain stops there until the sweep tries it again.
   */
  async #runWithRetries(
    conversationId: string,
    input: TurnInput,
    inboxId: string | null,
    lease: HeldLease,
  ): Promise<TurnResult> {
    const attempts = this.#deps.turnAttempts ?? 3;
    const outageEnds = Date.now() + (this.#deps.outageWaitMs ?? 600_000);
    // `attempt` counts failures other than outages (at most `attempts`); `run` counts every try.
    // The first turn after a read ahead takes it, and starts from it if it is still good.
    let context = this.#readAhead.take(conversationId, lease);
    for (let attempt = 1, run = 1, outagePause = 0; ; run += 1) {
      const interrupt = new AbortController();
      this.#running.set(conversationId, interrupt);
      try {
        const signals = {
          shutdown: this.#shutdown.signal,
          interrupt: interrupt.signal,
          progress: lease.progress,
          attempt: run,
          ...(context ? { context } : {}),
        };
        context = undefined;
        const summary = await this.#deps.runner.run(conversationId, input, signals);
        lease.progress();
        this.#noticed.delete(conversationId); // the outage, if there was one, is over for it
        return summary;
      } catch (error) {
        if (this.#shutdown.signal.aborted) return notRun('shutting-down');
        if (lease.lost.aborted) return notRun('lease-lost');
        // Another process answered the message first: nothing to retry, nothing to mark.
        if (inboxId && isAppError(error) && error.code === 'conflict') return notRun('answered-elsewhere');
        const modelDown = isModelUnavailable(error);
        const outage = modelDown || isStoreUnavailable(error);
        const final = outage ? Date.now() >= outageEnds : attempt >= attempts;
        this.#deps.logger.error(
          {
            conversationId,
            inboxId,
            attempt,
            outage: modelDown ? 'model' : outage ? 'store' : false,
            final,
            err: error,
          },
          'turn failed',
        );
        if (modelDown && input.kind === 'message') await this.#noticeModelOutage(conversationId);
        if (final && outage) throw error; // left pending, and nothing after it goes first
        if (final) {
          if (input.kind === 'message' && !(await this.#deps.runner.giveUp(conversationId, input, error, run)))
            throw error; // left pending, as above
          return notRun('gave-up');
        }
        // Real pauses, not the conversation clock: these wait out an outage (a shutdown ends them).
        outagePause = outage
          ? Math.min(Math.max(outagePause * 2, modelDown ? 1000 : 250), modelDown ? 30_000 : 10_000)
          : 0;
        if (!outage) attempt += 1;
        await systemClock.sleep(outage ? outagePause : 100 * attempt, this.#shutdown.signal).catch(() => undefined);
      } finally {
        this.#running.delete(conversationId);
      }
    }
  }

  /** At most one notice per conversation per model outage (per process: a restart may tell again). */
  async #noticeModelOutage(conversationId: string): Promise<void> {
    const notice = this.#deps.modelOutageNotice;
    if (!notice || this.#noticed.has(conversationId)) return;
    this.#noticed.add(conversationId);
    try {
      if (await this.#deps.runner.noticeOutage(conversationId, notice)) void this.#deps.dispatcher.kick();
    } catch (error) {
      this.#deps.logger.warn({ conversationId, err: error }, 'model outage notice not recorded');
    }
  }
}

/** The trace an inbox item's turn continues (tracing on). */
function traceOf(item: InboxItem): { traceParent?: string } {
  return item.traceParent ? { traceParent: item.traceParent } : {};
}
