// 10,000 timers due within a 10 s window on the real clock: every one fires once, none early; lateness.
import { pino } from 'pino';
import { z } from 'zod';
import { randomIds, systemClock } from '../../src/core/clock.ts';
import type { NewTimer } from '../../src/core/timer.ts';
import { openStore } from '../../src/store/open-store.ts';
import { defineTimerKind, TimerKindRegistry, type TimerKind } from '../../src/timers/timer-kinds.ts';
import { TimerWorker } from '../../src/timers/timer-worker.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { flags, report, summarize } from '../lib/stats.ts';
import { benchParticipant } from '../lib/bench-participant.ts';

const opts = flags({ store: 'sqlite', timers: 10_000, windowMs: 10_000, leadMs: 0, conversations: 1 });
/** Time to write the timers before the first is due (PostgreSQL round trips take longer). */
const leadMs = opts.leadMs || (opts.store === 'postgres' ? 25_000 : 4_000);
const pgUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_timers_${process.pid}`;
const store = await openStore(opts.store === 'postgres' ? pgUrl : tempSqliteUrl(), {
  schema: opts.store === 'postgres' ? schema : 'public',
});

// `--conversations N`: the timers spread over N participants' conversations, as a study's are (1: all on one).
for (let index = 0; index < opts.conversations; index++) {
  await store.insertParticipant(benchParticipant(index, `+1416555${String(index).padStart(4, '0')}`, null));
  await store.insertConversation({
    id: `c${index}`,
    participantId: `p${index}`,
    flow: 'bench',
    channel: 'none',
    state: 's',
    subState: null,
    version: 0,
    createdAt: new Date(),
    updatedAt: new Date(),
  });
}

const firedAt = new Map<string, number[]>();
const lateness: number[] = [];
let early = 0;
const benchKind = defineTimerKind({
  kind: 'bench',
  payload: z.object({}),
  handle: async (timer) => {
    const now = Date.now();
    const late = now - timer.dueAt.getTime();
    if (late < 0) early += 1;
    lateness.push(late);
    firedAt.set(timer.id, [...(firedAt.get(timer.id) ?? []), now]);
  },
});
const kinds = new TimerKindRegistry().register(benchKind as unknown as TimerKind<never>);

const start = Date.now() + leadMs;
const timers: NewTimer[] = Array.from({ length: opts.timers }, (_, index) => ({
  id: `t${index}`,
  kind: 'bench',
  conversationId: `c${index % opts.conversations}`,
  participantId: `p${index % opts.conversations}`,
  dedupKey: `bench:${index}`,
  dueAt: new Date(start + Math.floor((index / opts.timers) * opts.windowMs)),
  payload: {},
  createdAt: new Date(),
}));
for (let index = 0; index < timers.length; index += 500) {
  await store.transaction(async (tx) => {
    for (const timer of timers.slice(index, index + 500)) await tx.scheduleTimer(timer);
  });
}
if (Date.now() > start) throw new Error('inserting the timers took longer than the lead time; raise --leadMs');

const worker = new TimerWorker({
  store,
  kinds,
  clock: systemClock,
  ids: randomIds,
  logger: pino({ level: 'silent' }),
  serialize: (_id, work) => work(),
});
worker.start();
const deadline = start + opts.windowMs + 60_000;
while (firedAt.size < opts.timers && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
await new Promise((resolve) => setTimeout(resolve, 500)); // any duplicate would show by now
await worker.stop();
const duplicates = [...firedAt.values()].filter((times) => times.length > 1).length;
const lastFire = Math.max(...[...firedAt.values()].flat());
await store.close();
if (opts.store === 'postgres') {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
}
report({
  timers: opts.timers,
  fired: firedAt.size,
  duplicates,
  early,
  latenessMs: summarize(lateness),
  drainedMsAfterLastDue: lastFire - (start + opts.windowMs),
});
