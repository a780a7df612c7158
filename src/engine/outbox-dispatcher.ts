import type { Logger } from 'pino';
import type { Channel } from '../channels/channel.ts';
import { ChannelError } from '../channels/channel.ts';
import type { ChannelGate } from './channel-gate.ts';
import type { EngineObserver } from '../observability/metrics.ts';
import type { Clock } from '../core/clock.ts';
import type { OutboxItem } from '../core/domain.ts';
import { describeError, isStoreUnavailable } from '../core/errors.ts';
import type { SentMark, Store } from '../store/store.ts';
import { failpoint } from '../core/failpoint.ts';

export interface OutboxDispatcherOptions {
  store: Pick<Store, 'batched' | 'claimDueOutbox' | 'markOutboxAttemptFailed' | 'markOutboxSentMany' | 'releaseOutbox'>;
  /** The channels by name (a `ChannelDirectory`, or a plain map in tests). */
  channels: { get(name: string): Channel | undefined };
  /** Every send goes through it (opt-outs, service windows). */
  gate: ChannelGate;
  /** Told of each delivery attempt's outcome (metrics). */
  observer?: Pick<EngineObserver, 'delivered'>;
  clock: Clock;
  logger: Logger;
  /** Attempts before a message is marked failed. */
  maxAttempts: number;
  /** How often due retries are looked for when nothing kicks the dispatcher (real ms). */
  pollIntervalMs?: number;
  /** Items claimed per query at most (default 100; never more than the free delivery slots). */
  batchSize?: number;
  /**
   * Deliveries in flight at once, across conversations (default 16). One conversation has at most
   * one: its next item is claimable only once the previous one is sent or has failed.
   */
  concurrency?: number;
  /** True while turns run in this process: a mark write may share their commit (group commit, decision 020). */
  othersWorking?: () => boolean;
}

/** Deliveries in flight at once when the options do not say. */
export const DEFAULT_DELIVERY_CONCURRENCY = 16;

/**
 * How long a claimed item is hidden from other senders; a sender that dies releases it this way.
 * Longer than the longest send (WhatsApp: free-form, then the template, 10 s each), so a slow
 * send is never claimed twice.
 */
const CLAIM_MS = 30_000;

/**
 * How long a send's "sent" mark may wait to be written with others (decision 020). The next turn's
 * commit or claim pass usually writes it sooner; a crash within the wait sends it again (same key).
 */
const MARK_DELAY_MS = 10;
/** How many sent rows a process remembers, so a late hand-over does not send them again. */
const RECENTLY_SENT = 10_000;

/** Delay before attempt `attempts + 1`: 1 s, 2 s, 4 s … capped at 5 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempts - 1), 300_000);
}

/**
 * Delivers the outbox: after every commit (`kick`) and on a slow poll for retries. Up to
 * `concurrency` deliveries run at once, and claiming goes on while slow ones are in flight, so a
 * receiver that hangs holds up only its own conversation. Items of one conversation go out in the
 * order they were queued, one at a time (the claim never hands out a conversation's next item
 * while an earlier one is still pending).
 */
export class OutboxDispatcher {
  readonly #options: OutboxDispatcherOptions;
  readonly #concurrency: number;
  #running: Promise<void> | null = null;
  #again = false;
  /**
   * Ends the coordinator's wait: a kick, or a delivery that finished (a slot is free, a
   * conversation's next item may be due).
   */
  #wake: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** Deliveries in flight, by outbox id. */
  readonly #inFlight = new Map<string, { done: Promise<void>; conversationId: string }>();
  /** Conversations whose rows were deleted (`forget`): nothing more of theirs is sent from here. */
  readonly #forgotten = new Set<string>();
  /**
   * Sent, not yet marked sent, by outbox id: written in groups (decision 020) by the next turn's
   * commit (`takeMarks`), before anything is claimed, or after `MARK_DELAY_MS`, and never sent again
   * by this process. While the store is unreachable they wait here, so an outage between a send and
   * its mark neither repeats the message nor holds the conversation's next one for the claim time.
   */
  readonly #marks = new Map<string, SentMark>();
  #markTimer: NodeJS.Timeout | null = null;
  /**
   * Marks handed to a commit not yet known to be written; a claim meanwhile may have found their
   * conversations blocked.
   */
  #marksOut = 0;
  /**
   * The last rows this process sent, oldest first: never sent again by it, whether their mark
   * waits, rides in a commit, or was written before a late hand-over of the same rows (their
   * claim ran out in between: a virtual clock's jump).
   */
  readonly #recentlySent = new Set<string>();
  #claimedWhileMarksOut = false;
  /** Rows a commit claimed for this process (`deliverClaimed`), one list per commit, waiting for a slot. */
  /**
   * Rows waiting for a slot, in order: one list per commit (`deliverClaimed`), or one row a claim
   * took ahead of the free slots (`claimed`: once sent, its conversation's next row may be due).
   */
  readonly #handedOff: Array<{ items: OutboxItem[]; claimed: boolean }> = [];
  /** A kick came while deliveries were in flight: claim again once one ends (it may have been blocked by them). */
  #kickedWhileBusy = false;

  constructor(options: OutboxDispatcherOptions) {
    this.#options = options;
    this.#concurrency = Math.max(1, options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY);
  }

  start(): void {
    this.#stopped = false;
    this.#timer = setInterval(() => this.kick(), this.#options.pollIntervalMs ?? 1000);
    this.#timer.unref();
    this.kick();
  }

  /**
   * Asks for a delivery pass; cheap to call often. Resolves when the dispatcher is next idle: no
   * delivery in flight and nothing claimable (everything due was sent, failed or is waiting to be
   * retried).
   */
  kick(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#inFlight.size > 0) this.#kickedWhileBusy = true;
    this.#again = true;
    this.#wakeUp();
    this.#running ??= this.#loop().finally(() => (this.#running = null));
    return this.#running;
  }

  /** Deliveries being sent right now by this process. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Until when a row claimed now is this process's to send (`deliverClaimed`). */
  claimUntil(now: Date): Date {
    return new Date(now.getTime() + CLAIM_MS);
  }

  /**
   * Delivers rows a commit wrote already claimed for this process (one message's parts, or one
   * turn's messages, in order), without a claim query: one after another, each only once the one
   * before it was sent. A failed send keeps its retry, and the rest are released to the claim.
   * Waits for a free slot like claimed rows do; rows that a shutdown leaves are claimed again when
   * their claim ends.
   */
  deliverClaimed(items: OutboxItem[]): void {
    if (items.length === 0 || this.#stopped) return;
    this.#handedOff.push({ items, claimed: false });
    this.#startHandedOff();
  }

  #startHandedOff(): void {
    while (!this.#stopped && this.#handedOff.length > 0 && this.#inFlight.size < this.#concurrency) {
      const { items, claimed } = this.#handedOff.shift()!;
      // A claim got there first (the claim ran out before the hand-over: a virtual clock's jump):
      // the rows go back to the claim, which sends each once and in order.
      if (items.some((item) => this.#sendingOrSent(item.id))) {
        const rest = items.filter((item) => !this.#sendingOrSent(item.id)).map((item) => item.id);
        void this.#options.store
          .releaseOutbox(rest, this.#options.clock.now())
          .catch((error: unknown) => this.#options.logger.warn({ err: error }, 'handed-over rows not released'));
        continue;
      }
      const chain = this.#deliverInOrder(items)
        .catch((error: unknown) =>
          this.#options.logger.error({ outboxId: items[0]!.id, err: error }, 'outbox delivery not recorded'),
        )
        .finally(() =>
          this.#settled(
            items.map((item) => item.id),
            this.#kickedWhileBusy || claimed,
          ),
        );
      for (const item of items) this.#inFlight.set(item.id, { done: chain, conversationId: item.conversationId });
    }
  }

  async #deliverInOrder(items: OutboxItem[]): Promise<void> {
    for (const [index, item] of items.entries()) {
      if (this.#stopped || this.#forgotten.has(item.conversationId) || !(await this.#deliver(item))) {
        const rest = items.slice(index + (this.#stopped ? 0 : 1)).map((later) => later.id);
        await this.#options.store.releaseOutbox(rest, this.#options.clock.now());
        return;
      }
    }
  }

  /** Deliveries ended: their slots are free; claim again when asked to. */
  #settled(ids: string[], claimAgain: boolean): void {
    for (const id of ids) this.#inFlight.delete(id);
    if (claimAgain) {
      this.#kickedWhileBusy = false;
      this.kick();
    }
    this.#startHandedOff();
  }

  /**
   * The conversation's rows were deleted with its participant: its hand-overs not yet begun are
   * dropped, and this waits for its delivery under way, so that nothing of it arrives after what
   * the caller sends next. A delivery another process holds is not reached.
   */
  async forget(conversationId: string): Promise<void> {
    this.#forgotten.add(conversationId);
    try {
      for (let index = this.#handedOff.length - 1; index >= 0; index--)
        if (this.#handedOff[index]!.items[0]?.conversationId === conversationId) this.#handedOff.splice(index, 1);
      const underWay = [...this.#inFlight.values()].filter((delivery) => delivery.conversationId === conversationId);
      await Promise.allSettled(underWay.map(({ done }) => done));
    } finally {
      this.#forgotten.delete(conversationId);
    }
  }

  /** Stops polling and claiming, waits for the deliveries in flight and writes their marks. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#wakeUp();
    await this.#running;
    await Promise.allSettled([...this.#inFlight.values()].map(({ done }) => done));
    await this.#writeMarks().catch((error: unknown) =>
      this.#options.logger.error({ err: error }, 'sent marks not written at shutdown'),
    );
  }

  /**
   * The marks waiting to be written, handed to a commit that writes them: it says `marksWritten`
   * after its commit, or `restoreMarks` if it failed.
   */
  takeMarks(): SentMark[] {
    const marks = this.#take();
    if (marks.length > 0) this.#marksOut += 1;
    return marks;
  }

  /** A commit wrote the marks it took: a claim that ran meanwhile saw their rows still pending, so claim again. */
  marksWritten(marks: readonly SentMark[]): void {
    if (marks.length === 0) return;
    this.#marksOut -= 1;
    if (this.#marksOut === 0 && this.#claimedWhileMarksOut) {
      this.#claimedWhileMarksOut = false;
      void this.kick();
    }
  }

  /** Marks a commit took and could not write: they wait again. */
  restoreMarks(marks: readonly SentMark[]): void {
    if (marks.length === 0) return;
    this.#marksOut -= 1;
    this.#requeue(marks);
  }

  #requeue(marks: readonly SentMark[]): void {
    for (const mark of marks) if (!this.#marks.has(mark.id)) this.#marks.set(mark.id, mark);
    this.#scheduleMarks();
  }

  #take(): SentMark[] {
    if (this.#markTimer) clearTimeout(this.#markTimer);
    this.#markTimer = null;
    const marks = [...this.#marks.values()];
    this.#marks.clear();
    return marks;
  }

  #scheduleMarks(): void {
    if (this.#markTimer || this.#marks.size === 0) return;
    this.#markTimer = setTimeout(() => {
      this.#markTimer = null;
      this.#writeMarks().catch((error: unknown) => {
        this.#options.logger.warn({ err: error }, 'sent marks not written yet');
        this.#scheduleMarks();
      });
    }, MARK_DELAY_MS);
    this.#markTimer.unref();
  }

  /** Claims while asked to or while deliveries are in flight (each one that ends may free the next). */
  async #loop(): Promise<void> {
    while (!this.#stopped && (this.#again || this.#inFlight.size > 0)) {
      if (!this.#again) await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
      if (this.#stopped) return;
      this.#again = false;
      try {
        await this.#pass();
      } catch (error) {
        this.#options.logger.error({ err: error }, 'outbox pass failed');
      }
    }
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Claims due items into the free delivery slots until none is due or no slot is free. */
  async #pass(): Promise<void> {
    const { store, clock } = this.#options;
    await this.#writeMarks();
    if (this.#marksOut > 0) this.#claimedWhileMarksOut = true;
    // One item per conversation per claim, so a conversation's messages leave in order even
    // when several processes deliver; the next one is claimable once this one is sent.
    while (!this.#stopped) {
      // Claims fill the free slots and a queue as deep again behind them, so that under load one
      // claim serves several deliveries (each claim is a write transaction of its own).
      const room = this.#concurrency - this.#inFlight.size + this.#concurrency - this.#queued();
      if (this.#inFlight.size >= this.#concurrency || room <= 0) return;
      const now = clock.now();
      const claimed = await store.claimDueOutbox(
        now,
        Math.min(room, this.#options.batchSize ?? 100),
        new Date(now.getTime() + CLAIM_MS),
      );
      if (claimed.length === 0) return;
      // A claim can run out while this process still holds the row (a slow send, a mark not yet
      // written, a virtual clock moved hours ahead): what it holds is not sent a second time.
      for (const item of claimed) {
        if (this.#holds(item.id)) continue;
        // One row per conversation: no order among those that wait.
        if (this.#inFlight.size < this.#concurrency) this.#track(item);
        else this.#handedOff.push({ items: [item], claimed: true });
      }
    }
  }

  /** Rows waiting for a slot (handed over by commits, or claimed ahead). */
  #queued(): number {
    return this.#handedOff.reduce((sum, { items }) => sum + items.length, 0);
  }

  /** In flight, waiting for a slot, or sent with its mark not yet written. */
  #holds(id: string): boolean {
    return this.#sendingOrSent(id) || this.#handedOff.some(({ items }) => items.some((item) => item.id === id));
  }

  #sendingOrSent(id: string): boolean {
    // Marks waiting or carried by a commit are of rows sent, so remembered here too.
    return this.#inFlight.has(id) || this.#recentlySent.has(id);
  }

  #remember(id: string): void {
    this.#recentlySent.add(id);
    if (this.#recentlySent.size > RECENTLY_SENT) this.#recentlySent.delete(this.#recentlySent.values().next().value!);
  }

  #track(item: OutboxItem): void {
    const delivery = this.#deliver(item)
      .then(() => undefined)
      .catch((error: unknown) =>
        this.#options.logger.error({ outboxId: item.id, err: error }, 'outbox delivery not recorded'),
      )
      .finally(() => this.#settled([item.id], true)); // the conversation's next row may be claimable now
    this.#inFlight.set(item.id, { done: delivery, conversationId: item.conversationId });
  }

  /**
   * Writes the waiting marks in one statement; throws (the pass fails, to be retried) while the
   * store is unreachable. Marks the store refuses for another reason are given up, so one bad row
   * cannot stop every delivery: its claim expires and it is sent again (at least once, same key).
   */
  async #writeMarks(): Promise<void> {
    const marks = this.#take();
    if (marks.length === 0) return;
    try {
      const gather = this.#options.othersWorking?.() === true;
      await this.#options.store.batched((ops) => ops.markOutboxSentMany(marks), { gather });
    } catch (error) {
      if (isStoreUnavailable(error)) {
        this.#requeue(marks);
        throw error;
      }
      if (marks.length > 1) {
        // One row the store refuses must not cost the others their marks: one at a time, then.
        for (const mark of marks) this.#marks.set(mark.id, mark);
        for (const mark of marks) await this.#writeMark(mark);
        return;
      }
      this.#options.logger.error({ outboxId: marks[0]!.id, err: error }, 'sent message could not be marked sent');
    }
  }

  async #writeMark(mark: SentMark): Promise<void> {
    if (!this.#marks.delete(mark.id)) return;
    try {
      await this.#options.store.markOutboxSentMany([mark]);
    } catch (error) {
      if (isStoreUnavailable(error)) {
        this.#requeue([mark]);
        throw error;
      }
      this.#options.logger.error({ outboxId: mark.id, err: error }, 'sent message could not be marked sent');
    }
  }

  /** True when it was sent (and marked, or kept to be marked). */
  async #deliver(item: OutboxItem): Promise<boolean> {
    const { store, clock, logger, channels, maxAttempts } = this.#options;
    const attempts = item.attempts + 1;
    const channel = channels.get(item.channel);
    let sent: SentMark;
    try {
      if (!channel) throw new ChannelError(`no channel named "${item.channel}" is configured`, { retryable: false });
      const receipt = await this.#options.gate.send(channel, { ...item, participantId: item.participantId });
      sent = { id: item.id, at: clock.now(), attempts, providerMessageId: receipt?.providerMessageId ?? null };
    } catch (error) {
      const retryable = !(error instanceof ChannelError) || error.retryable;
      const giveUp = !retryable || attempts >= maxAttempts;
      const nextAttemptAt = giveUp ? null : new Date(clock.now().getTime() + retryDelayMs(attempts));
      this.#options.observer?.delivered(item.channel, giveUp ? 'failed' : 'retry');
      await store.markOutboxAttemptFailed(item.id, { attempts, error: describeError(error), nextAttemptAt });
      logger.warn(
        { outboxId: item.id, channel: item.channel, attempts, giveUp, err: error },
        'outbound delivery failed',
      );
      return false;
    }
    this.#options.observer?.delivered(item.channel, 'sent');
    failpoint('outbox.after-send');
    this.#marks.set(item.id, sent);
    this.#remember(item.id);
    this.#scheduleMarks();
    return true;
  }
}
