// @requires postgres
import { DatabaseSync } from 'node:sqlite';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { inboxItem, outboxItem } from './store-fixtures.ts';
import { PG_URL } from '../kit/requirements.ts';
import { oldDatabasePlaces, oldDatabases } from './migration-kit.ts';

const places = oldDatabasePlaces('migration_025');

/**
 * Two participants as version 024 stored them, each with a conversation, an inbox row in it and
 * one outside any, and a reply; the last inbox and outbox rows deleted, so each table's counter is
 * ahead of its largest ordinal.
 */
async function seed(db: Kysely<unknown>): Promise<void> {
  for (const n of [1, 2]) {
    const [participant, conversation, phone] = [`p_${n}`, `c_${n}`, `+1416555010${n}`];
    await sql`insert into participants (id, phone_number, status, debug, enrolled_at, created_at, updated_at)
      values (${participant}, ${phone}, 'active', 0, 0, 0, 0)`.execute(db);
    await sql`insert into conversations (id, participant_id, channel, flow, state, version, created_at, updated_at)
      values (${conversation}, ${participant}, 'webhook', 'habit-coach', 'CONVERSATION_ACTIVE', 1, 0, 0)`.execute(db);
    await sql`insert into inbox (id, channel, channel_message_id, sender, text, participant_id, conversation_id,
        status, received_at)
      values (${`in_${n}`}, 'webhook', ${`m${n}`}, ${phone}, 'hi', ${participant}, ${conversation}, 'pending', 0),
             (${`alone_${n}`}, 'webhook', ${`a${n}`}, ${phone}, 'hi', ${participant}, null, 'ignored', 0)`.execute(db);
    await sql`insert into outbox (id, conversation_id, participant_id, channel, recipient, kind, text,
        idempotency_key, status, attempts, next_attempt_at, created_at)
      values (${`out_${n}`}, ${conversation}, ${participant}, 'webhook', ${phone}, 'text', 'hello',
        ${`k${n}`}, 'pending', 0, 0, 0)`.execute(db);
  }
  await sql`insert into inbox (id, channel, sender, text, status, received_at)
    values ('in_last', 'webhook', '+14165550199', 'x', 'ignored', 0)`.execute(db);
  await sql`delete from inbox where id = 'in_last'`.execute(db);
  await sql`insert into outbox (id, conversation_id, channel, recipient, kind, text, idempotency_key, status,
      attempts, next_attempt_at, created_at)
    values ('out_last', 'c_1', 'webhook', '+14165550101', 'text', 'x', 'k_last', 'sent', 1, 0, 0)`.execute(db);
  await sql`delete from outbox where id = 'out_last'`.execute(db);
}

describe.each(oldDatabases('024_turn_tool_calls', seed, places))('migration 025 on $name', ({ prepare, dialect }) => {
  it("keeps every row; a participant's deletion still takes all of theirs and nothing else", async () => {
    const url = await prepare();
    const store = await openStore(url, { schema: places.pgSchema });
    const item = inboxItem({ participantId: 'p_2', conversationId: 'c_2' });
    const reply = outboxItem('c_2', { participantId: 'p_2' });
    try {
      for (const id of ['in_1', 'alone_1', 'in_2', 'alone_2']) expect(await store.getInbox(id)).toBeDefined();
      expect((await store.getOutbox('out_1'))?.participantId).toBe('p_1');

      await store.insertInbox(item);
      await store.enqueueOutbox([reply]);

      expect(await store.deleteParticipant('p_1')).toBe(true);
      for (const id of ['in_1', 'alone_1']) expect(await store.getInbox(id)).toBeUndefined();
      expect(await store.getOutbox('out_1')).toBeUndefined();
      for (const id of ['in_2', 'alone_2', item.id]) expect(await store.getInbox(id)).toBeDefined();
      expect(await store.getOutbox('out_2')).toBeDefined();
    } finally {
      await store.close();
    }
    if (dialect === 'postgres') {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      const left = await client.query(`select conname from pg_constraint where contype = 'f'
        and confrelid = '"${places.pgSchema}".participants'::regclass
        and conrelid in ('"${places.pgSchema}".inbox'::regclass, '"${places.pgSchema}".outbox'::regclass)`);
      await client.end();
      expect(left.rows).toEqual([]);
      return;
    }
    const file = new DatabaseSync(url.slice('sqlite:'.length));
    try {
      for (const table of ['inbox', 'outbox']) {
        const keys = file.prepare(`select "table" from pragma_foreign_key_list('${table}')`).all();
        expect(keys.map((key) => key['table'])).toEqual(['conversations']);
      }
      // New rows took ordinals after every one given before, the deleted last ones' included.
      const ordinal = (table: string, id: string) =>
        file.prepare(`select ordinal from ${table} where id = ?`).get(id)?.['ordinal'];
      expect(ordinal('inbox', 'in_2')).toBe(3);
      expect(ordinal('inbox', item.id)).toBe(6);
      expect(ordinal('outbox', 'out_2')).toBe(2);
      expect(ordinal('outbox', reply.id)).toBe(4);
    } finally {
      file.close();
    }
  });
});
