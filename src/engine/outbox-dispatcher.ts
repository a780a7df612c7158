import type { Logger } from 'pino';
import type { Channel } from '../channels/channel.ts';
import { ChannelError } from '../channels/channel.ts';
import type { ChannelGate } from './channel-gate.ts';
import type { EngineObserver } from '../observability/metrics.ts';
import type { Clock } from '../core/clock.ts';
import type { OutboxItem } from '../core/domain.ts';
import { describeError, isStoreUnavailable } from '../core/errors.ts';
import type { Store } from '../store/store.ts';
import { failpoint } from '../core/failpoint.ts';

export interface OutboxDispatcherOptions {
  store: Store;
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
}

/** Deliveries in flight at once when the options do not say. */
export const DEFAULT_DELIVERY_CONCURRENCY = 16;

/**
 * How long a claimed item is hidden from other senders; a sender that dies releases it this way.
 * Longer than the longest send (WhatsApp: free-form, then the template, 10 s each), so a slow
 * send is never claimed twice.
 */
const CLAIM_MS = 30_000;

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
  /** Ends the coordinator's wait: a kick, or a delivery that finished (a slot is free, a conversation's next item may be due). */
  #wake: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** Deliveries in flight, by outbox id. */
  readonly #inFlight = new Map<string, Promise<void>>();
  /**
   * Sent, but the store did not take the "sent" mark (it was unreachable): marked before anything
   * else is claimed, and never sent again by this process, so an outage between the send and the
   * mark neither repeats the message nor holds the conversation's next one for the claim time.
   */
  readonly #unmarked = new Map<string, { at: Date; attempts: number; providerMessageId: string | null }>();
  /** Rows a commit claimed for this process (`deliverClaimed`), one list per commit, waiting for a slot. */
  readonly #handedOff: OutboxItem[][] = [];
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
    this.#handedOff.push(items);
    this.#startHandedOff();
  }

  #startHandedOff(): void {
    while (!this.#stopped && this.#handedOff.length > 0 && this.#inFlight.size < this.#concurrency) {
      const items = this.#handedOff.shift()!;
      const chain = this.#deliverInOrder(items)
        .catch((error: unknown) =>
          this.#options.logger.error(
            { outboxId: items[0]!.id, err: describeError(error) },
            'outbox delivery not recorded',
          ),
        )
        .finally(() =>
          this.#settled(
            items.map((item) => item.id),
            this.#kickedWhileBusy,
          ),
        );
      for (const item of items) this.#inFlight.set(item.id, chain);
    }
  }

  async #deliverInOrder(items: OutboxItem[]): Promise<void> {
    for (const [index, item] of items.entries()) {
      if (this.#stopped || !(await this.#deliver(item))) {
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

  /** Stops polling and claiming, and waits for the deliveries in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#wakeUp();
    await this.#running;
    await Promise.allSettled(this.#inFlight.values());
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
        this.#options.logger.error({ err: describeError(error) }, 'outbox pass failed');
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
    await this.#markSent();
    // One item per conversation per claim, so a conversation's messages leave in order even
    // when several processes deliver; the next one is claimable once this one is sent.
    while (!this.#stopped) {
      const free = this.#concurrency - this.#inFlight.size;
      if (free <= 0) return;
      const now = clock.now();
      const claimed = await store.claimDueOutbox(
        now,
        Math.min(free, this.#options.batchSize ?? 100),
        new Date(now.getTime() + CLAIM_MS),
      );
      if (claimed.length === 0) return;
      // An item still in flight here (its claim ran out mid-send) is not sent a second time.
      for (const item of claimed) if (!this.#inFlight.has(item.id)) this.#track(item);
    }
  }

  #track(item: OutboxItem): void {
    const delivery = this.#deliver(item)
      .then(() => undefined)
      .catch((error: unknown) =>
        this.#options.logger.error({ outboxId: item.id, err: describeError(error) }, 'outbox delivery not recorded'),
      )
      .finally(() => this.#settled([item.id], true)); // the conversation's next row may be claimable now
    this.#inFlight.set(item.id, delivery);
  }

  /**
   * Records the sends the store missed; throws (the pass fails, to be retried) while it is still
   * unreachable. A mark the store refuses for another reason is given up, so one bad row cannot
   * stop every delivery: its claim expires and it is sent again (at least once, same key).
   */
  async #markSent(): Promise<void> {
    for (const [id, sent] of this.#unmarked) {
      try {
        await this.#options.store.markOutboxSent(id, sent.at, sent.attempts, sent.providerMessageId);
      } catch (error) {
        if (isStoreUnavailable(error)) throw error;
        this.#options.logger.error(
          { outboxId: id, err: describeError(error) },
          'sent message could not be marked sent',
        );
      }
      this.#unmarked.delete(id);
    }
  }

  /** True when it was sent (and marked, or kept to be marked). */
  async #deliver(item: OutboxItem): Promise<boolean> {
    const { store, clock, logger, channels, maxAttempts } = this.#options;
    const attempts = item.attempts + 1;
    const channel = channels.get(item.channel);
    let sent: { at: Date; attempts: number; providerMessageId: string | null };
    try {
      if (!channel) throw new ChannelError(`no channel named "${item.channel}" is configured`, { retryable: false });
      const receipt = await this.#options.gate.send(channel, { ...item, participantId: item.participantId });
      sent = { at: clock.now(), attempts, providerMessageId: receipt?.providerMessageId ?? null };
    } catch (error) {
      const retryable = !(error instanceof ChannelError) || error.retryable;
      const giveUp = !retryable || attempts >= maxAttempts;
      const nextAttemptAt = giveUp ? null : new Date(clock.now().getTime() + retryDelayMs(attempts));
      this.#options.observer?.delivered(item.channel, giveUp ? 'failed' : 'retry');
      await store.markOutboxAttemptFailed(item.id, { attempts, error: describeError(error), nextAttemptAt });
      logger.warn(
        { outboxId: item.id, channel: item.channel, attempts, giveUp, err: describeError(error) },
        'outbound delivery failed',
      );
      return false;
    }
    this.#options.observer?.delivered(item.channel, 'sent');
    failpoint('outbox.after-send');
    try {
      await store.markOutboxSent(item.id, sent.at, sent.attempts, sent.providerMessageId);
    } catch (error) {
      // Kept only once the mark failed: a pass that runs meanwhile must not mark it a second time.
      this.#unmarked.set(item.id, sent);
      throw error;
    }
    return true;
  }
}
