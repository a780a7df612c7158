// @requires postgres
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationLeases } from '../../src/engine/conversation-lease.ts';
import { startPgFanout, type PgFanout } from '../../src/events/pg-fanout.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { waitFor } from '../kit/wait-for.ts';
import { participantWithConversation } from '../store/store-fixtures.ts';
import { PG_URL } from '../kit/requirements.ts';

// Two processes' worth of leases and fan-out on one PostgreSQL schema: a process waiting for a
// conversation another one holds is woken by the holder's "let go" notification instead of
// sleeping out its back-off.
const SCHEMA = `wake_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const logger = pino({ level: 'silent' });

let store: Store;
const fanouts: PgFanout[] = [];

beforeAll(async () => {
  store = await openStore(PG_URL, { schema: SCHEMA });
}, 30_000);

afterAll(async () => {
  for (const fanout of fanouts) await fanout.close();
  await store?.close();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`drop schema if exists "${SCHEMA}" cascade`);
  await admin.end();
});

/** One "process": its leases (a back-off far longer than the test may take) wired to its own fan-out connection. */
async function processOn(owner: string, leaseStore: Store): Promise<ConversationLeases> {
  const fanout = await startPgFanout({
    url: PG_URL,
    schema: SCHEMA,
    logger,
    written: () => undefined,
    released: (id) => leases.wake(id),
    reconnected: () => undefined,
  });
  const leases = new ConversationLeases({
    store: leaseStore,
    shared: true,
    owner,
    now: () => new Date(),
    logger,
    retryMs: 60_000,
    maxRetryMs: 60_000,
    released: (id) => fanout.notifyReleased(id),
  });
  fanouts.push(fanout);
  return leases;
}

describe('conversation leases across processes', () => {
  it('a waiter is woken when the holder lets go, not after its back-off', async () => {
    let refusals = 0;
    const counting = new Proxy(store, {
      get(target, key) {
        if (key !== 'acquireLease') return Reflect.get(target, key);
        return (...args: Parameters<Store['acquireLease']>) =>
          target.acquireLease(...args).then((taken) => (taken || refusals++, taken));
      },
    });
    const a = await processOn('process-a', store);
    const b = await processOn('process-b', counting);
    const { c } = await participantWithConversation(store);
    const order: string[] = [];
    const signal = new AbortController().signal;

    let second: Promise<void> | undefined;
    await a.hold(
      c.id,
      async () => {
        order.push('a works');
        second = b.hold(c.id, async () => void order.push('b works'), signal);
        // b tried, was refused, and now sleeps a back-off of at least 30 s.
        await waitFor(() => refusals === 1, { what: 'b refused while a holds the lease' });
        order.push('a lets go');
      },
      signal,
    );
    await second;

    expect(order).toEqual(['a works', 'a lets go', 'b works']);
    expect(refusals).toBe(1);
  }, 20_000);

  it('does not lose a "let go" that lands between a refused take and the wait', async () => {
    let takes = 0;
    const racing = {
      acquireLease: async () => {
        takes += 1;
        if (takes > 1) return true;
        leases.wake('conv_race'); // the holder's notice arrives while our refused take is on its way back
        return false;
      },
      renewLease: async () => true,
      releaseLease: async () => undefined,
    } as unknown as Store;
    const leases = new ConversationLeases({
      store: racing,
      shared: true,
      owner: 'p',
      now: () => new Date(),
      logger,
      retryMs: 60_000,
      maxRetryMs: 60_000,
    });
    expect(await leases.hold('conv_race', async () => 'done', new AbortController().signal)).toBe('done');
    expect(takes).toBe(2);
  }, 20_000);
});
