import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { systemClock } from '../../src/core/clock.ts';
import { EventHub } from '../../src/events/event-hub.ts';
import type { SessionEvent } from '../../src/events/session-event.ts';
import {
  MAX_BUFFERED_BYTES,
  SLOW_CONSUMER_CLOSE_CODE,
  streamToSocket,
  type Socket,
} from '../../src/http/session-stream.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { conversation, message, participant } from '../store/store-fixtures.ts';
import { waitFor } from '../kit/wait-for.ts';

let store: Store;
let conversationId: string;
beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  const p = participant();
  const c = conversation(p.id);
  await store.insertParticipant(p);
  await store.insertConversation(c);
  conversationId = c.id;
});
afterEach(() => store.close());

const hubOf = (options: { retention?: number; cacheSize?: number } = {}) =>
  new EventHub({ store, clock: systemClock, logger: pino({ level: 'silent' }), ...options });
const status = (text: string) => ({ type: 'status' as const, role: 'system' as const, text });

describe('EventHub', () => {
  it('tells other processes of a turn commit unless it found that none of them follows', async () => {
    const written: string[] = [];
    const hub = new EventHub({
      store,
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      written: (id) => written.push(id),
    });
    const commit = async (followedElsewhere?: () => boolean | undefined) => {
      const turnNo = await hub.beginTurn(conversationId);
      const [stored] = await store.appendMessages([
        message(conversationId, { role: 'assistant', text: `reply ${turnNo}` }),
      ]);
      await hub.commitTurn(
        conversationId,
        turnNo,
        async (announce) => store.appendEvents(announce([stored!])),
        followedElsewhere,
      );
    };
    await commit(() => false);
    expect(written).toEqual([]);
    await commit(() => true);
    await commit(() => undefined); // not asked (SQLite, or nothing appended): told, as before
    await commit();
    expect(written).toEqual([conversationId, conversationId, conversationId]);
    expect((await store.listEvents(conversationId)).filter((event) => event.type === 'final')).toHaveLength(4);
  });

  it('says when a conversation gets its first subscriber in this process and loses its last', () => {
    const following: Array<[string, boolean]> = [];
    const hub = new EventHub({
      store,
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      following: (id, on) => following.push([id, on]),
    });
    const first = hub.subscribe(conversationId, () => undefined);
    const second = hub.subscribe(conversationId, () => undefined);
    first();
    first(); // twice: still one subscriber left
    expect(following).toEqual([[conversationId, true]]);
    second();
    expect(following).toEqual([
      [conversationId, true],
      [conversationId, false],
    ]);
  });

  it('assigns gapless seqs in emit order and persists them all', async () => {
    const hub = hubOf();
    const emitted = await Promise.all(
      Array.from({ length: 50 }, (_, index) => hub.emit(conversationId, status(`s${index}`))),
    );
    expect(emitted.map((event) => event.seq)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
    await hub.flushAll();
    expect((await store.listEvents(conversationId)).map((event) => event.payload.text)).toEqual(
      emitted.map((event) => event.type === 'status' && event.text),
    );
  });

  it('gives each event the time it was emitted at, live and in the log', async () => {
    let now = Date.UTC(2026, 10, 29, 9, 0, 0, 0);
    const clock = { ...systemClock, now: () => new Date(now) };
    const hub = new EventHub({ store, clock, logger: pino({ level: 'silent' }) });
    const times: string[] = [];
    const emitted: SessionEvent[] = [];
    for (const step of [0, 0, 1, 0, 999, 60_000]) {
      now += step;
      times.push(new Date(now).toISOString());
      emitted.push(await hub.emit(conversationId, status('now')));
    }
    await hub.flushAll();
    expect(emitted.map((event) => event.at)).toEqual(times);
    expect((await store.listEvents(conversationId)).map((event) => event.at.toISOString())).toEqual(times);
  });

  it('goes on after a write that committed although it failed (its answer lost in an outage)', async () => {
    const lost = () => Object.assign(new Error('Query read timeout'), { code: 'store_unavailable' });
    const hub = hubOf();
    const turn = async (text: string, answerLost: boolean) => {
      const turnNo = await hub.beginTurn(conversationId);
      await hub.emit(conversationId, { type: 'token', turnId: turnNo, messageId: text, text });
      const [stored] = await store.appendMessages([message(conversationId, { role: 'assistant', text })]);
      await hub.commitTurn(conversationId, turnNo, async (announce) => {
        await store.appendEvents(announce([stored!]));
        if (answerLost) throw lost();
      });
    };
    await turn('one', false);
    await expect(turn('two', true)).rejects.toThrow('Query read timeout');
    await hub.setSpeaking(conversationId, false, 2, 'two'); // what a failed turn's end emits
    await hub.emit(conversationId, status('right after'));
    await turn('three', false);
    // A write-behind flush whose answer is lost, too.
    const append = store.appendEvents.bind(store);
    store.appendEvents = async (events) => {
      await append(events);
      store.appendEvents = append;
      throw lost();
    };
    await hub.emit(conversationId, status('after'));
    await hub.flushAll();
    await hub.emit(conversationId, status('and on'));
    await hub.flushAll();

    const log = await store.listEvents(conversationId);
    expect(log.map((event) => event.seq)).toEqual(log.map((_, index) => index + 1));
    expect(log.filter((event) => event.type !== 'speaking').map((event) => [event.type, event.payload.text])).toEqual([
      ['token', 'one'],
      ['final', 'one'],
      ['token', 'two'],
      ['final', 'two'],
      ['status', 'right after'],
      ['token', 'three'],
      ['final', 'three'],
      ['status', 'after'],
      ['status', 'and on'],
    ]);
    expect(new Set(log.map((event) => event.turnNo))).toEqual(new Set([1, 2, 3, null]));
  });

  it('continues the seq and turn numbers of the stored log in a new hub (a restart)', async () => {
    const first = hubOf();
    await first.beginTurn(conversationId);
    await first.emit(conversationId, { type: 'token', turnId: 1, messageId: 'm', text: 'hi' });
    await first.flushAll();
    const second = hubOf();
    expect(await second.beginTurn(conversationId)).toBe(2);
    expect((await second.emit(conversationId, status('again'))).seq).toBe(2);
  });

  it('announces, after a restart, a message whose final event its process never wrote', async () => {
    const first = hubOf();
    await first.syncMessages(conversationId); // follows the stream from before its first message
    await store.appendMessages([message(conversationId, { role: 'assistant', text: 'one' })]);
    await first.syncMessages(conversationId);
    await first.flushAll();
    // Committed, then the process died before its `final` reached the log.
    await store.appendMessages([message(conversationId, { role: 'assistant', text: 'two' })]);

    const second = hubOf();
    await second.syncMessages(conversationId);
    await second.flushAll();
    const finals = (await store.listEvents(conversationId)).filter((event) => event.type === 'final');
    expect(finals.map((event) => event.payload.text)).toEqual(['one', 'two']);
  });

  it('does not announce again what the log already announced, nor history from before the log', async () => {
    await store.appendMessages([message(conversationId, { role: 'assistant', text: 'before any event' })]);
    const first = hubOf();
    await first.syncMessages(conversationId);
    await store.appendMessages([message(conversationId, { role: 'assistant', text: 'news' })]);
    await first.syncMessages(conversationId);
    await first.flushAll();
    const second = hubOf();
    await second.syncMessages(conversationId);
    await second.flushAll();
    const finals = (await store.listEvents(conversationId)).filter((event) => event.type === 'final');
    expect(finals.map((event) => event.payload.text)).toEqual(['news']);
  });

  it('prunes beyond the retention and answers a cursor before the window with a full snapshot', async () => {
    const hub = hubOf({ retention: 10 });
    for (let index = 0; index < 40; index++) await hub.emit(conversationId, status(`s${index}`));
    await hub.flushAll();
    const range = await store.eventRange(conversationId);
    expect(range!.last).toBe(40);
    expect(range!.first).toBeGreaterThan(25);

    const stale = await hub.replay(conversationId, 3);
    expect(stale.events).toEqual([]);
    expect(stale.resync.data).toMatchObject({ full: true, lastSeq: 40 });
    const fresh = await hub.replay(conversationId, 38);
    expect(fresh.events.map((event) => event.seq)).toEqual([39, 40]);
    expect(fresh.resync.data).toMatchObject({ full: false });
  });

  it('drops the pending events of a deleted conversation instead of retrying them for ever', async () => {
    const logged: string[] = [];
    const hub = new EventHub({
      store,
      clock: systemClock,
      logger: pino({ level: 'error' }, { write: (line: string) => void logged.push(line) }),
    });
    await hub.emit(conversationId, status('before'));
    await hub.flushAll();
    const conversation = await store.getConversation(conversationId);
    await hub.emit(conversationId, status('after'));
    await store.deleteParticipant(conversation!.participantId!);
    await hub.flushAll();
    await hub.flushAll();
    expect(logged).toEqual([]);
    expect(await store.listEvents(conversationId)).toEqual([]);
  });

  it('forgets idle conversations beyond its cache and reloads them from the log', async () => {
    const hub = hubOf({ cacheSize: 2 });
    const others = [];
    for (let index = 0; index < 3; index++) {
      const p = participant();
      const c = conversation(p.id);
      await store.insertParticipant(p);
      await store.insertConversation(c);
      others.push(c.id);
    }
    await hub.emit(conversationId, status('one'));
    await hub.flushAll();
    for (const id of others) await hub.emit(id, status('other'));
    await hub.flushAll();
    expect((await hub.emit(conversationId, status('two'))).seq).toBe(2);
  });
});

describe('WebSocket slow consumer', () => {
  it('closes a socket whose send buffer is past the bound, and stops sending to it', async () => {
    const hub = hubOf();
    const sent: string[] = [];
    let closedWith: number | undefined;
    const socket: Socket & { bufferedAmount: number } = {
      bufferedAmount: 0,
      readyState: 1,
      send: (data) => void sent.push(data),
      close: (code) => void (closedWith = code),
      on: () => undefined,
    };
    streamToSocket(socket, hub, systemClock, conversationId, null);
    await hub.emit(conversationId, status('first'));
    await waitFor(() => sent.length === 2, { what: 'the resync and the first status' });
    expect(sent.map((data) => (JSON.parse(data) as SessionEvent).type)).toEqual(['resync', 'status']);
    socket.bufferedAmount = MAX_BUFFERED_BYTES + 1;
    await hub.emit(conversationId, status('second'));
    await hub.emit(conversationId, status('third'));
    expect(closedWith).toBe(SLOW_CONSUMER_CLOSE_CODE);
    expect(sent).toHaveLength(2);
  });
});
