import { attachReplaying } from './attach-replaying.ts';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { Message } from '../core/domain.ts';
import type { AnnounceEvents } from '../engine/turn-broadcast.ts';
import type { Store } from '../store/store.ts';
import { EventTimes } from './event-times.ts';
import { eventOfRow, sessionSnapshot } from './event-rows.ts';
import type { EventDraft, SessionEvent } from './session-event.ts';

export type EventListener = (event: SessionEvent) => void;
/** Told which turn number answers which inbox item, as the turn starts (not part of the log). */
export type TurnListener = (turn: { turnNo: number; inboxId: string | null }) => void;
export type ResyncEvent = Extract<SessionEvent, { type: 'resync' }>;

export interface EventHubOptions {
  store: Pick<
    Store,
    'transaction' | 'appendEvents' | 'eventRange' | 'getConversation' | 'listEvents' | 'listMessages' | 'pruneEvents'
  >;
  clock: Clock;
  logger: Logger;
  /** Events kept per conversation; older ones are pruned (a cursor before them gets a full snapshot). */
  retention?: number;
  /** Events one replay returns at most. */
  replayLimit?: number;
  /** Conversations whose stream state stays cached while idle. */
  cacheSize?: number;
  /** Told after events of a conversation were written (other processes pull them, decision 004). */
  written?: (conversationId: string) => void;
  /** Told when a conversation gets its first subscriber in this process (true) or loses its last. */
  following?: (conversationId: string, following: boolean) => void;
  /** Told when a conversation was deleted here: other processes end its streams too (`endHere`). */
  ended?: (conversationId: string) => void;
}

interface Stream {
  loaded: boolean;
  nextSeq: number;
  firstSeq: number;
  lastTurnNo: number;
  lastMessageSeq: number;
  speaking: boolean;
  /** Work queued or running on the chain; a busy stream is never evicted. */
  active: number;
  listeners: Set<EventListener>;
  turnListeners: Set<TurnListener>;
  pending: SessionEvent[];
  flushScheduled: boolean;
  /** A turn is running: its events wait for its commit (or `HOLD_MS`) instead of the next tick. */
  holding: boolean;
  /** Every change to the stream runs on this chain, so events keep their order. */
  chain: Promise<unknown>;
  /**
   * A write of its events failed: it may have committed all the same (its answer lost in an
   * outage), or another process took those seqs. The head is read again before the next seqs.
   */
  stale: boolean;
}

/** Pending events that trigger a flush at once, even if the event loop has not come round yet. */
const FLUSH_BATCH = 256;
/** How long a running turn's events may wait for its commit before they are written on their own. */
const HOLD_MS = 200;

/**
 * The per-conversation session event log: assigns gapless seqs, fans events out to live
 * subscribers at once, writes them behind in batches, replays from a cursor, and turns newly
 * committed messages into `final` events. See docs/decisions/002-session-event-stream.md.
 */
export class EventHub {
  readonly #options: Required<EventHubOptions>;
  readonly #streams = new Map<string, Stream>();
  readonly #times = new EventTimes();

  constructor(options: EventHubOptions) {
    this.#options = {
      retention: 2000,
      replayLimit: 200,
      cacheSize: 5000,
      written: () => undefined,
      following: () => undefined,
      ended: () => undefined,
      ...options,
    };
  }

  get replayLimit(): number {
    return this.#options.replayLimit;
  }

  /** Live subscriptions (sockets, SSE streams, narrations) in this process. */
  get subscribers(): number {
    let count = 0;
    for (const stream of this.#streams.values()) count += stream.listeners.size;
    return count;
  }

  subscribe(conversationId: string, listener: EventListener): () => void {
    const stream = this.#stream(conversationId);
    stream.listeners.add(listener);
    if (stream.listeners.size === 1) this.#options.following(conversationId, true);
    return () => {
      if (stream.listeners.delete(listener) && stream.listeners.size === 0)
        this.#options.following(conversationId, false);
    };
  }

  emit(conversationId: string, draft: EventDraft): Promise<SessionEvent> {
    return this.#run(conversationId, (stream) => this.#emitNow(conversationId, stream, draft));
  }

  /** The next turn number of the conversation (monotonic, survives restarts through the log). */
  beginTurn(conversationId: string, inboxId: string | null = null): Promise<number> {
    return this.#run(conversationId, (stream) => {
      stream.holding = true;
      const turnNo = ++stream.lastTurnNo;
      for (const listener of stream.turnListeners) listener({ turnNo, inboxId });
      return turnNo;
    });
  }

  onTurn(conversationId: string, listener: TurnListener): () => void {
    const stream = this.#stream(conversationId);
    stream.turnListeners.add(listener);
    return () => stream.turnListeners.delete(listener);
  }

  /**
   * Runs a turn's commit inside the conversation's stream, so its events go into the turn's own
   * transaction (decision 020). `work` calls `announce` with the messages it appends and writes
   * what it returns: the turn's events not yet written (already delivered live), a `final` for
   * each assistant or system message (from memory: nothing is read back), and `speaking: false`.
   * Once `work` resolves, the new events are delivered; if it throws, they are dropped (their seqs
   * stay free) and the others wait for the next flush, as before. Nothing else is emitted on the
   * conversation meanwhile, so the seqs stay gapless and in delivery order. Other processes are
   * told of the new events unless `followedElsewhere` says that none of them follows these.
   */
  commitTurn<T>(
    conversationId: string,
    turnNo: number,
    work: (announce: AnnounceEvents) => Promise<T>,
    followedElsewhere?: () => boolean | undefined,
  ): Promise<T> {
    return this.#run(conversationId, async (stream) => {
      let announced: { fresh: SessionEvent[]; lastMessageSeq: number } | undefined;
      const announce: AnnounceEvents = (messages) => {
        const drafts: EventDraft[] = messages
          .filter((message) => message.role !== 'user')
          .map((message) => ({ ...finalOf(message), turnId: turnNo }));
        if (stream.speaking) drafts.push({ type: 'speaking', turnId: turnNo, data: { speaking: false } });
        const fresh = drafts.map((draft, index) => this.#event(conversationId, stream.nextSeq + index, draft));
        announced = { fresh, lastMessageSeq: Math.max(stream.lastMessageSeq, ...messages.map((m) => m.seq)) };
        return [...stream.pending, ...fresh].map((event) => this.#times.toStored(event));
      };
      const result = await work(announce).catch((error: unknown) => {
        if (announced) stream.stale = true;
        throw error;
      });
      if (!announced) return result;
      const { fresh, lastMessageSeq } = announced;
      stream.pending = [];
      stream.nextSeq += fresh.length;
      stream.lastMessageSeq = lastMessageSeq;
      stream.speaking = false;
      stream.holding = false;
      for (const event of fresh) this.#deliver(conversationId, stream, event);
      if (followedElsewhere?.() !== false) this.#options.written(conversationId);
      await this.#prune(conversationId, stream);
      return result;
    });
  }

  /** The turn is over without `commitTurn` announcing it: its events are written as usual from now. */
  endTurn(conversationId: string): void {
    const stream = this.#streams.get(conversationId);
    if (!stream?.holding) return;
    stream.holding = false;
    if (stream.pending.length > 0)
      void this.#run(conversationId, (s) => this.#flush(conversationId, s)).catch(() => undefined);
  }

  /**
   * Emits a `final` for every assistant or system message committed since the last call. The
   * messages of `turn` (by the runner's turn id) carry that turn's number.
   */
  syncMessages(conversationId: string, turn?: { id: string; number: number }): Promise<void> {
    return this.#run(conversationId, async (stream) => {
      const recent = await this.#options.store.listMessages(conversationId, {
        afterSeq: stream.lastMessageSeq,
        limit: 200,
      });
      for (const message of recent) {
        stream.lastMessageSeq = message.seq;
        if (message.role === 'user') continue;
        this.#emitNow(conversationId, stream, {
          ...finalOf(message),
          turnId: turn && message.turnId === turn.id ? turn.number : null,
        });
      }
    });
  }

  setSpeaking(
    conversationId: string,
    speaking: boolean,
    turnId: number | null,
    messageId: string | null,
  ): Promise<void> {
    return this.#run(conversationId, (stream) => {
      if (stream.speaking === speaking) return;
      stream.speaking = speaking;
      this.#emitNow(conversationId, stream, { type: 'speaking', turnId, messageId, data: { speaking } });
    });
  }

  /**
   * The events after `cursor` (at most `replayLimit`) and the `resync` that closes them. A null,
   * stale (pruned) or unknown (ahead of the log) cursor gets no events and a full snapshot.
   */
  replay(conversationId: string, cursor: number | null): Promise<{ events: SessionEvent[]; resync: ResyncEvent }> {
    return this.#run(conversationId, async (stream) => {
      await this.#flush(conversationId, stream);
      const head = stream.nextSeq - 1;
      const usable = cursor !== null && cursor <= head && cursor >= stream.firstSeq - 1;
      const stored = usable
        ? await this.#options.store.listEvents(conversationId, { afterSeq: cursor, limit: this.#options.replayLimit })
        : [];
      const events = stored.map(eventOfRow);
      const lastReplayed = events.at(-1)?.seq ?? cursor ?? head;
      const snapshot = await sessionSnapshot(this.#options.store, conversationId, {
        speaking: stream.speaking,
        lastSeq: head,
        lastTurnId: stream.lastTurnNo,
        full: !usable,
        nextCursor: lastReplayed < head ? lastReplayed : null,
      });
      const resync: ResyncEvent = {
        type: 'resync',
        seq: head,
        conversationId,
        turnId: null,
        messageId: null,
        role: 'system',
        correlationId: null,
        at: this.#times.iso(this.#options.clock.now()),
        data: snapshot,
      };
      return { events, resync };
    });
  }

  /**
   * The conversation is gone (deleted with its participant): `last` goes to each of its listeners
   * in this process and in the others (`ended`), which are then let go (a socket closes on it).
   */
  end(conversationId: string, last: SessionEvent): void {
    this.endHere(conversationId, last);
    this.#options.ended(conversationId);
  }

  /** As `end`, in this process only: another process deleted the conversation and said so. */
  endHere(conversationId: string, last: SessionEvent): void {
    const stream = this.#streams.get(conversationId);
    if (!stream || stream.listeners.size === 0) return;
    const listeners = [...stream.listeners];
    stream.listeners.clear();
    this.#options.following(conversationId, false);
    for (const listener of listeners) listener(last);
  }

  /**
   * Ends the streams here whose conversation no longer exists: it was deleted while this process
   * could not be told (its fan-out connection was down). `last` builds each one's last event.
   */
  async endDeleted(last: (conversationId: string) => SessionEvent): Promise<void> {
    const gone = await Promise.all(
      this.#followedIds().map(async (id) => ((await this.#options.store.getConversation(id)) ? null : id)),
    );
    for (const id of gone) if (id) this.endHere(id, last(id));
  }

  /**
   * Replays from `cursor`, then follows live: `send` sees each event once, in seq order.
   * Returns the unsubscribe function.
   */
  async attach(conversationId: string, cursor: number | null, send: EventListener): Promise<() => void> {
    return attachReplaying(this, conversationId, cursor, send);
  }

  /**
   * Pulls the events another process wrote since this one last saw the log, delivers them to the
   * local subscribers in order and moves the head past them: before this process writes to the
   * log again (it took the lease), or because another process said it wrote (fan-out).
   */
  catchUp(conversationId: string): Promise<void> {
    const stream = this.#streams.get(conversationId);
    if (!stream) return Promise.resolve(); // loads fresh from the log when first used
    return this.#run(conversationId, async (s) => {
      await this.#flush(conversationId, s);
      for (;;) {
        const rows = await this.#options.store.listEvents(conversationId, { afterSeq: s.nextSeq - 1, limit: 500 });
        for (const row of rows) {
          const event = eventOfRow(row);
          s.nextSeq = event.seq + 1;
          if (event.turnId !== null) s.lastTurnNo = Math.max(s.lastTurnNo, event.turnId);
          const messageSeq =
            event.type === 'final' ? Number((event.data as { messageSeq?: unknown } | undefined)?.messageSeq ?? 0) : 0;
          s.lastMessageSeq = Math.max(s.lastMessageSeq, messageSeq);
          if (event.type === 'speaking')
            s.speaking = Boolean((event.data as { speaking?: unknown } | undefined)?.speaking);
          this.#deliver(conversationId, s, event);
        }
        if (rows.length < 500) return;
      }
    });
  }

  /** Catches up every conversation someone in this process follows (missed notifications). */
  async catchUpFollowed(): Promise<void> {
    await Promise.all(this.#followedIds().map((id) => this.catchUp(id)));
  }

  /** Writes the conversation's pending events now (before this process lets go of its lease). */
  flush(conversationId: string): Promise<void> {
    if (!this.#streams.has(conversationId)) return Promise.resolve();
    return this.#run(conversationId, (stream) => this.#flush(conversationId, stream));
  }

  /** True when someone in this process follows the conversation's events. */
  followed(conversationId: string): boolean {
    return (this.#streams.get(conversationId)?.listeners.size ?? 0) > 0;
  }

  /** Writes everything pending (before a shutdown, or for a test that reads the table). */
  async flushAll(): Promise<void> {
    await Promise.all(
      [...this.#streams.keys()].map((id) => this.#run(id, (stream) => this.#flush(id, stream)).catch(() => undefined)),
    );
  }

  /** The conversations someone in this process follows. */
  #followedIds(): string[] {
    return [...this.#streams].filter(([, stream]) => stream.listeners.size > 0).map(([id]) => id);
  }

  #stream(conversationId: string): Stream {
    let stream = this.#streams.get(conversationId);
    if (!stream) {
      stream = {
        loaded: false,
        nextSeq: 1,
        firstSeq: 1,
        lastTurnNo: 0,
        lastMessageSeq: 0,
        speaking: false,
        active: 0,
        listeners: new Set(),
        turnListeners: new Set(),
        pending: [],
        flushScheduled: false,
        holding: false,
        chain: Promise.resolve(),
        stale: false,
      };
      this.#streams.set(conversationId, stream);
      this.#evictIdle();
    }
    return stream;
  }

  #run<T>(conversationId: string, work: (stream: Stream) => T | Promise<T>): Promise<T> {
    const stream = this.#stream(conversationId);
    // Nothing queued and nothing to load: work that needs no waiting (an event emitted) runs now,
    // without a link in the chain (a turn emits a dozen).
    if (stream.loaded && !stream.stale && stream.active === 0) {
      let result: T | Promise<T>;
      try {
        result = work(stream);
      } catch (error) {
        return Promise.reject(error);
      }
      if (!(result instanceof Promise)) return Promise.resolve(result);
      stream.active += 1;
      stream.chain = result.catch(() => undefined).finally(() => (stream.active -= 1));
      return result;
    }
    stream.active += 1;
    const result = stream.chain.then(async () => {
      if (!stream.loaded) await this.#load(conversationId, stream);
      else if (stream.stale) await this.#reload(conversationId, stream);
      return work(stream);
    });
    stream.chain = result.catch(() => undefined).finally(() => (stream.active -= 1));
    return result;
  }

  async #load(conversationId: string, stream: Stream): Promise<void> {
    const { store } = this.#options;
    const [range, last] = await Promise.all([
      store.eventRange(conversationId),
      store.listMessages(conversationId, { limit: 1 }),
    ]);
    stream.nextSeq = (range?.last ?? 0) + 1;
    stream.firstSeq = range?.first ?? 1;
    stream.lastTurnNo = range?.lastTurnNo ?? 0;
    // The log says which messages it announced: one committed after that (its process died, or its
    // events could not be written, before the `final` was) is still news. Without a `final` in
    // the log, messages committed before this process knew the stream are history.
    stream.lastMessageSeq = range?.lastMessageSeq ?? last[0]?.seq ?? 0;
    stream.loaded = true;
  }

  /**
   * After a failed write: pending events whose seqs the log has now are dropped (the write went
   * through after all, or another process wrote them: a client that saw ours gets a resync), and
   * new seqs, turn numbers and `final`s continue from the log where it is ahead of this process.
   */
  async #reload(conversationId: string, stream: Stream): Promise<void> {
    let range: Awaited<ReturnType<EventHubOptions['store']['eventRange']>>;
    try {
      range = await this.#options.store.eventRange(conversationId);
    } catch (error) {
      // Still unreachable: the work goes on from what this process knows, and asks again next time.
      this.#options.logger.warn({ conversationId, err: error }, 'session event log not read again yet');
      return;
    }
    const last = range?.last ?? 0;
    stream.pending = stream.pending.filter((event) => event.seq > last);
    stream.nextSeq = Math.max(stream.nextSeq, last + 1);
    stream.lastTurnNo = Math.max(stream.lastTurnNo, range?.lastTurnNo ?? 0);
    stream.lastMessageSeq = Math.max(stream.lastMessageSeq, range?.lastMessageSeq ?? 0);
    stream.stale = false;
  }

  /** An event the engine built: typed already, so it is not parsed again (the log's rows are). */
  #event(conversationId: string, seq: number, draft: EventDraft): SessionEvent {
    return {
      turnId: null,
      messageId: null,
      role: 'assistant',
      correlationId: null,
      ...draft,
      seq,
      conversationId,
      at: this.#times.iso(this.#options.clock.now()),
    } as SessionEvent;
  }

  #emitNow(conversationId: string, stream: Stream, draft: EventDraft): SessionEvent {
    const event = this.#event(conversationId, stream.nextSeq, draft);
    stream.nextSeq += 1;
    stream.pending.push(event);
    this.#deliver(conversationId, stream, event);
    this.#scheduleFlush(conversationId, stream);
    return event;
  }

  #deliver(conversationId: string, stream: Stream, event: SessionEvent): void {
    for (const listener of stream.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#options.logger.warn({ conversationId, err: error }, 'session event listener failed');
      }
    }
  }

  #scheduleFlush(conversationId: string, stream: Stream): void {
    // node:sqlite answers synchronously, so a busy stretch of turns may never yield to setImmediate.
    if (stream.pending.length % FLUSH_BATCH === 0)
      void this.#run(conversationId, (s) => this.#flush(conversationId, s)).catch(() => undefined);
    if (stream.flushScheduled) return;
    stream.flushScheduled = true;
    const flush = () => void this.#run(conversationId, (s) => this.#flush(conversationId, s)).catch(() => undefined);
    if (stream.holding) setTimeout(flush, HOLD_MS).unref();
    else setImmediate(flush);
  }

  async #flush(conversationId: string, stream: Stream): Promise<void> {
    stream.flushScheduled = false;
    if (stream.pending.length === 0) return;
    const batch = stream.pending;
    stream.pending = [];
    try {
      await this.#options.store.appendEvents(batch.map((event) => this.#times.toStored(event)));
    } catch (error) {
      if (!(await this.#options.store.getConversation(conversationId).catch(() => true))) {
        // The conversation was deleted (its participant removed): its events go with it.
        this.#streams.delete(conversationId);
        return;
      }
      // Kept for the next flush: the log must stay gapless.
      stream.pending = [...batch, ...stream.pending];
      stream.stale = true;
      this.#options.logger.error(
        { conversationId, count: batch.length, err: error },
        'session events not persisted yet',
      );
      return;
    }
    this.#options.written(conversationId);
    await this.#prune(conversationId, stream);
  }

  async #prune(conversationId: string, stream: Stream): Promise<void> {
    const keepFrom = stream.nextSeq - this.#options.retention;
    if (keepFrom > stream.firstSeq + Math.ceil(this.#options.retention / 10)) {
      await this.#options.store.pruneEvents(conversationId, keepFrom);
      stream.firstSeq = keepFrom;
    }
  }

  /** Forgets idle streams beyond the cache size (they reload from the log when used again). */
  #evictIdle(): void {
    if (this.#streams.size <= this.#options.cacheSize) return;
    for (const [id, stream] of this.#streams) {
      if (this.#streams.size <= this.#options.cacheSize) return;
      if (
        stream.active === 0 &&
        stream.listeners.size === 0 &&
        stream.turnListeners.size === 0 &&
        stream.pending.length === 0 &&
        !stream.flushScheduled &&
        !stream.holding &&
        !stream.speaking
      )
        this.#streams.delete(id);
    }
  }
}

function finalOf(message: Message): EventDraft {
  return {
    type: 'final',
    role: message.role === 'system' ? 'system' : 'assistant',
    messageId: message.id,
    text: message.text,
    data: { kind: message.kind, source: message.source, messageSeq: message.seq, poll: message.poll },
  };
}
