// @requires postgres
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { oldDatabasePlaces, oldDatabases } from './migration-kit.ts';

const places = oldDatabasePlaces('migration_022');
const PG_SCHEMA = places.pgSchema;

/** A conversation's log as version 021 stored it: one row per event. */
async function seedEvents(db: Kysely<unknown>): Promise<void> {
  await sql`insert into participants (id, phone_number, status, debug, enrolled_at, created_at, updated_at)
    values ('p_1', '+14165550101', 'active', 0, 0, 0, 0)`.execute(db);
  await sql`insert into conversations (id, participant_id, channel, flow, state, version, created_at, updated_at)
    values ('c_1', 'p_1', 'webhook', 'habit-coach', 'CONVERSATION_ACTIVE', 1, 0, 0)`.execute(db);
  await sql`insert into events (conversation_id, seq, turn_id, type, data, at) values
    ('c_1', 1, '1', 'token', '{"messageId":"m1","role":"assistant","correlationId":null,"text":"Hi"}', 1000),
    ('c_1', 2, '1', 'final',
      '{"messageId":"m1","role":"assistant","text":"Hi","data":{"messageSeq":2,"poll":null}}', 1001),
    ('c_1', 3, null, 'speaking', '{"messageId":null,"data":{"speaking":false}}', 1002)`.execute(db);
}

const backends = oldDatabases('021_timers_by_participant', seedEvents, places);

describe.each(backends)('migration 022 on $name', ({ prepare }) => {
  it('keeps every event of version 021, and the log head a process loads', async () => {
    const url = await prepare();
    const store = await openStore(url, { schema: PG_SCHEMA });
    try {
      expect(await store.listEvents('c_1')).toEqual([
        {
          conversationId: 'c_1',
          seq: 1,
          turnNo: 1,
          type: 'token',
          payload: { messageId: 'm1', role: 'assistant', correlationId: null, text: 'Hi' },
          at: new Date(1000),
        },
        {
          conversationId: 'c_1',
          seq: 2,
          turnNo: 1,
          type: 'final',
          payload: { messageId: 'm1', role: 'assistant', text: 'Hi', data: { messageSeq: 2, poll: null } },
          at: new Date(1001),
        },
        {
          conversationId: 'c_1',
          seq: 3,
          turnNo: null,
          type: 'speaking',
          payload: { messageId: null, data: { speaking: false } },
          at: new Date(1002),
        },
      ]);
      expect(await store.eventRange('c_1')).toEqual({ first: 1, last: 3, lastTurnNo: 1, lastMessageSeq: 2 });
      await expect(store.appendEvents([{ ...(await store.listEvents('c_1'))[2]!, seq: 3 }])).rejects.toThrow();
    } finally {
      await store.close();
    }
  });
});
