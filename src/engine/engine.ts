import type { Logger } from 'pino';
import type { InboxItem } from '../core/domain.ts';
import { AppError, describeError } from '../core/errors.ts';
import type { Clock } from '../core/clock.ts';
import type { Store } from '../store/store.ts';
import type { TurnInput } from './flow.ts';
import type { ChangeFeed } from './change-feed.ts';
import { KeyedQueue } from './keyed-queue.ts';
import type { OutboxDispatcher } from './outbox-dispatcher.ts';
import type { TurnRunner, TurnSummary } from './turn-runner.ts';

export interface EngineDeps {
  store: Store;
  runner: TurnRunner;
  dispatcher: OutboxDispatcher;
  clock: Clock;
  logger: Logger;
  /** Told after each piece of work on a conversation settles. */
  changes?: ChangeFeed;
  /** Attempts of a turn that throws (store outage, version conflict) before its inbox item is marked failed. */
  turnAttempts?: number;
}

/**
 * Runs turns: one at a time per conversation, in the order they were queued, different
 * conversations in parallel. Every turn commits, then the outbox is kicked.
 */
export class Engine {
  readonly #deps: EngineDeps;
  readonly #queue = new KeyedQueue();
  readonly #shutdown = new AbortController();
  /** The interrupt switch of each conversation's running turn. */
  readonly #running = new Map<string, AbortController>();
  #accepting = true;

  constructor(deps: EngineDeps) {
    this.#deps = deps;
  }

  /** Queues the turn for a recorded inbox item. Resolves when that turn has committed. */
  processInbox(item: InboxItem): Promise<TurnSummary | undefined> {
    const conversationId = item.conversationId;
    if (!conversationId) throw new AppError('internal', `inbox item ${item.id} has no conversation`, { fault: 'system' });
    return this.#enqueue(conversationId, { kind: 'message', text: item.text, inboxId: item.id }, item.id);
  }

  /** Queues an event turn (greeting, timer) for a conversation. */
  trigger(conversationId: string, input: Extract<TurnInput, { kind: 'event' }>): Promise<TurnSummary | undefined> {
    return this.#enqueue(conversationId, input, null);
  }

  /**
   * Runs `work` in the conversation's queue (nothing else of that conversation runs meanwhile),
   * then kicks the outbox for whatever it queued.
   */
  async exclusive<T>(conversationId: string, work: () => Promise<T>): Promise<T> {
    try {
      return await this.#queue.run(conversationId, work);
    } finally {
      void this.#deps.dispatcher.kick();
      this.#deps.changes?.publish(conversationId);
    }
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

  /** Re-queues every pending inbox item (after a restart or crash), in arrival order. */
  async recover(): Promise<number> {
    const pending = await this.#deps.store.listPendingInbox();
    for (const item of pending) {
      if (item.conversationId) void this.processInbox(item);
    }
    if (pending.length > 0) this.#deps.logger.info({ count: pending.length }, 're-queued pending inbound messages');
    return pending.length;
  }

  /** Turns queued or running. */
  get backlog(): number {
    return this.#queue.size;
  }

  idle(): Promise<void> {
    return this.#queue.idle();
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  /** Stops accepting, waits up to `timeoutMs` for queued turns, then aborts the rest. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.#accepting = false;
    const timedOut = await Promise.race([
      this.#queue.idle().then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), timeoutMs).unref()),
    ]);
    if (timedOut) {
      this.#deps.logger.warn({ backlog: this.#queue.size }, 'shutdown timeout: aborting turns in progress; they re-run after restart');
      this.#shutdown.abort(new AppError('shutting_down', 'the server is shutting down', { fault: 'system', retryable: true }));
      await this.#queue.idle();
    }
    await this.#deps.dispatcher.stop();
  }

  #enqueue(conversationId: string, input: TurnInput, inboxId: string | null): Promise<TurnSummary | undefined> {
    return this.#queue.run(conversationId, async () => {
      if (this.#shutdown.signal.aborted) return undefined;
      const summary = await this.#runWithRetries(conversationId, input, inboxId);
      void this.#deps.dispatcher.kick();
      this.#deps.changes?.publish(conversationId);
      return summary;
    });
  }

  async #runWithRetries(conversationId: string, input: TurnInput, inboxId: string | null): Promise<TurnSummary | undefined> {
    const attempts = this.#deps.turnAttempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      const interrupt = new AbortController();
      this.#running.set(conversationId, interrupt);
      try {
        return await this.#deps.runner.run(conversationId, input, { shutdown: this.#shutdown.signal, interrupt: interrupt.signal });
      } catch (error) {
        if (this.#shutdown.signal.aborted) return undefined;
        const final = attempt >= attempts;
        this.#deps.logger.error({ conversationId, inboxId, attempt, final, err: describeError(error) }, 'turn failed');
        if (final) {
          if (inboxId) await this.#markFailed(inboxId, error);
          return undefined;
        }
        // A real pause, not the conversation clock: this waits out an outage.
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      } finally {
        this.#running.delete(conversationId);
      }
    }
  }

  async #markFailed(inboxId: string, error: unknown): Promise<void> {
    try {
      await this.#deps.store.setInboxStatus(inboxId, 'failed', this.#deps.clock.now(), describeError(error));
    } catch (markError) {
      this.#deps.logger.error({ inboxId, err: describeError(markError) }, 'could not mark inbox item failed');
    }
  }
}
