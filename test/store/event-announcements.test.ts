// @requires postgres
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/core/domain.ts';
import { openStore } from '../../src/store/open-store.ts';
import { eventChannelOf } from '../../src/store/query-context.ts';
import type { Store } from '../../src/store/store.ts';
import { PG_URL } from '../kit/requirements.ts';
import { waitFor } from '../kit/wait-for.ts';
import { at, participantWithConversation } from './store-fixtures.ts';

// Other processes learn of a conversation's new events from a notification the store sends in
// the transaction that writes them (decision 004): with the commit, never without it.
const SCHEMA = `announce_${process.pid}`;
let store: Store;
let listener: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  store = await openStore(PG_URL, { schema: SCHEMA });
  listener = new pg.Client({ connectionString: PG_URL });
  await listener.connect();
  listener.on('notification', (message) => heard.push(`${message.channel} ${message.payload}`));
  await listener.query(`listen "${eventChannelOf(SCHEMA)}"`);
});

afterAll(async () => {
  await listener?.end();
  await store?.close();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`drop schema if exists "${SCHEMA}" cascade`);
  await admin.end();
});

const event = (conversationId: string, seq: number): StoredEvent => ({
  conversationId,
  seq,
  turnNo: 1,
  type: 'token',
  payload: { text: `t${seq}` },
  at: at(seq),
});

describe('event announcements on PostgreSQL', () => {
  it('announce each conversation once per write, when the write commits, and never for one rolled back', async () => {
    const [one, two] = [await participantWithConversation(store), await participantWithConversation(store)];
    const channel = eventChannelOf(SCHEMA);

    await store.appendEvents([event(one.c.id, 1), event(one.c.id, 2), event(two.c.id, 1)]);
    await waitFor(() => heard.length === 2, { what: 'two announcements' });
    expect(heard.sort()).toEqual([`${channel} ${one.c.id}`, `${channel} ${two.c.id}`].sort());

    heard.length = 0;
    await expect(
      store.transaction(async (tx) => {
        await tx.appendEvents([event(one.c.id, 3)]);
        throw new Error('the unit of work fails');
      }),
    ).rejects.toThrow('the unit of work fails');
    await store.transaction(async (tx) => {
      await tx.appendEvents([event(two.c.id, 2)]);
      // Not yet: the notification leaves with the commit.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual([]);
    });
    await waitFor(() => heard.length === 1, { what: 'the committed announcement' });
    expect(heard).toEqual([`${channel} ${two.c.id}`]);
    expect((await store.listEvents(one.c.id)).map((e) => e.seq)).toEqual([1, 2]);
  });
});
