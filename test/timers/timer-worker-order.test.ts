import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { randomIds, systemClock } from '../../src/core/clock.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { defineTimerKind, TimerKindRegistry, type TimerKind } from '../../src/timers/timer-kinds.ts';
import { TimerWorker } from '../../src/timers/timer-worker.ts';
import { conversation, participant } from '../store/store-fixtures.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** A timer kind whose firings are logged as they start and end; a firing named in `held` waits for its release. */
function loggingKind() {
  const log: string[] = [];
  const held = new Map<string, () => void>();
  const hold = (id: string) => new Promise<void>((resolve) => held.set(id, resolve));
  const holding = new Set<string>();
  const kind = defineTimerKind({
    kind: 'logged',
    payload: z.object({}),
    handle: async (timer) => {
      log.push(`start ${timer.id}`);
      if (holding.has(timer.id)) await hold(timer.id);
      log.push(`end ${timer.id}`);
    },
  });
  return { log, kind, holding, release: (id: string) => held.get(id)?.() };
}

/**
 * Timers `[id, conversation, ms after the first is due]`, each conversation a participant's; a
 * worker over them, on the store as `through` hands it over (default: as it is).
 */
async function timersDue(
  timers: ReadonlyArray<readonly [string, string, number]>,
  {
    through = (inner: Store) => inner,
    ...options
  }: { concurrency?: number; batchSize?: number; through?: (inner: Store) => Store } = {},
) {
  store = await openStore(tempSqliteUrl());
  const due = new Date(systemClock.now().getTime() - 60_000);
  for (const conversationId of new Set(timers.map(([, c]) => c))) {
    const p = participant();
    await store.insertParticipant(p);
    await store.insertConversation(conversation(p.id, { id: conversationId }));
  }
  for (const [id, conversationId, offset] of timers) {
    const participantId = (await store.getConversation(conversationId))!.participantId!;
    await store.scheduleTimer({
      id,
      kind: 'logged',
      conversationId,
      participantId,
      dedupKey: `order:${id}`,
      dueAt: new Date(due.getTime() + offset),
      payload: {},
      createdAt: due,
    });
  }
  const logged = loggingKind();
  const worker = new TimerWorker({
    store: through(store),
    kinds: new TimerKindRegistry().register(logged.kind as unknown as TimerKind<never>),
    clock: systemClock,
    ids: randomIds,
    logger: pino({ level: 'silent' }),
    // No queue of the engine's: the order within a conversation is the worker's own.
    serialize: (_conversationId, work) => work(),
    ...options,
  });
  return { logged, worker, store };
}

it("fires different conversations' due timers side by side, and each conversation's in due order", async () => {
  // a1 and a2 are conversation a's, due first and second; b1 is due between them.
  const { logged, worker, store } = await timersDue([
    ['a1', 'c_a', 0],
    ['b1', 'c_b', 1],
    ['a2', 'c_a', 2],
  ]);
  logged.holding.add('a1');
  const firing = worker.fireDue();
  // While a1's handler waits, b1 (another conversation) fires; a2 (a1's) does not start.
  await waitFor(() => logged.log.includes('end b1'), { what: 'b1 fired while a1 waits' });
  expect(logged.log).toEqual(['start a1', 'start b1', 'end b1']);
  logged.release('a1');
  expect(await firing).toBe(3);
  expect(logged.log).toEqual(['start a1', 'start b1', 'end b1', 'end a1', 'start a2', 'end a2']);
  for (const id of ['a1', 'b1', 'a2']) expect((await store.getTimer(id))?.status).toBe('done');
});

it('fires no more conversations side by side than its concurrency', async () => {
  const { logged, worker } = await timersDue(
    [
      ['a1', 'c_a', 0],
      ['b1', 'c_b', 1],
      ['c1', 'c_c', 2],
    ],
    { concurrency: 2 },
  );
  logged.holding.add('a1');
  logged.holding.add('b1');
  const firing = worker.fireDue();
  await waitFor(() => logged.log.length === 2, { what: 'a1 and b1 started' });
  // Both lanes wait: c1 starts only once one of them is free (a free lane would have started it
  // within these turns of the event loop: the store answers at once, the handler logs first).
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(logged.log).toEqual(['start a1', 'start b1']);
  logged.release('b1');
  await waitFor(() => logged.log.includes('end c1'), { what: 'c1 fired once b1 ended' });
  logged.release('a1');
  expect(await firing).toBe(3);
  expect(logged.log).toEqual(['start a1', 'start b1', 'end b1', 'start c1', 'end c1', 'end a1']);
});

/** The worker's store with its transactions held until `open()` (claims and reads go straight through). */
function heldTransactions(inner: Store) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let waiting = 0;
  const store: Store = Object.create(inner, {
    transaction: {
      value: async (...args: Parameters<Store['transaction']>) => {
        waiting += 1;
        await gate;
        return inner.transaction(...args);
      },
    },
  });
  return { store, open, waiting: () => waiting };
}

it("moves a lane on while a firing's outcome commits; the batch ends once every outcome is committed", async () => {
  let held!: ReturnType<typeof heldTransactions>;
  // One lane, batches of two: a1 and b1 first, then a2.
  const {
    logged,
    worker,
    store: inner,
  } = await timersDue(
    [
      ['a1', 'c_a', 0],
      ['b1', 'c_b', 1],
      ['a2', 'c_a', 2],
    ],
    { concurrency: 1, batchSize: 2, through: (store) => (held = heldTransactions(store)).store },
  );
  const firing = worker.fireDue();
  // a1's completion is held, yet the one lane fires b1, of another conversation.
  await waitFor(() => logged.log.includes('end b1'), { what: 'b1 fired while a1 commits' });
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(logged.log).toEqual(['start a1', 'end a1', 'start b1', 'end b1']);
  // One transaction asked for: b1's completion waits to join the next one.
  expect(held.waiting()).toBe(1);
  expect((await inner.getTimer('a1'))?.status).toBe('running');
  held.open();
  expect(await firing).toBe(3);
  expect(logged.log).toEqual(['start a1', 'end a1', 'start b1', 'end b1', 'start a2', 'end a2']);
  for (const id of ['a1', 'b1', 'a2']) expect((await inner.getTimer(id))?.status).toBe('done');
  expect((await inner.listTurns('c_a')).map((turn) => turn.module)).toEqual(['logged', 'logged']);
  // a1's, then b1's (queued behind it), then a2's.
  expect(held.waiting()).toBe(3);
});

it("fires a conversation's next timer only once the one before it is committed", async () => {
  let held!: ReturnType<typeof heldTransactions>;
  const { logged, worker } = await timersDue(
    [
      ['a1', 'c_a', 0],
      ['a2', 'c_a', 1],
    ],
    { through: (store) => (held = heldTransactions(store)).store },
  );
  const firing = worker.fireDue();
  await waitFor(() => held.waiting() === 1, { what: "a1's completion asked for" });
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(logged.log).toEqual(['start a1', 'end a1']);
  held.open();
  expect(await firing).toBe(2);
  expect(logged.log).toEqual(['start a1', 'end a1', 'start a2', 'end a2']);
});
