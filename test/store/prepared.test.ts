import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../src/store/open-store.ts';
import { prepared, preparedInsert } from '../../src/store/prepared.ts';
import type { QueryContext } from '../../src/store/query-context.ts';
import type { Database } from '../../src/store/schema.ts';

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `prepared_${process.pid}`;

// A table of the store's schema would need its migrations; a temporary one of the same name is enough.
const findNote = prepared((db, a: { conversationId: string; limit: number }) =>
  db.selectFrom('notes').select(['id', 'text']).where('conversation_id', '=', a.conversationId).orderBy('id').limit(a.limit),
);
const insertNotes = preparedInsert('notes');

describe('prepared queries on PostgreSQL', () => {
  const pool = createPgPool(PG_URL, SCHEMA, { poolMax: 1 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const ctx: QueryContext = { db, dialect: 'postgres', inTransaction: false, atomic: (work) => work(ctx) };
  afterAll(async () => {
    await sql`drop schema if exists ${sql.id(SCHEMA)} cascade`.execute(db);
    await db.destroy();
  });

  it('binds new arguments to the statement compiled once, and runs it as a named server-side statement', async () => {
    await sql`create schema if not exists ${sql.id(SCHEMA)}`.execute(db);
    await sql`create table notes (id text primary key, conversation_id text not null, text text not null, created_at bigint not null)`.execute(db);
    const row = (id: string, conversationId: string) => ({ id, conversation_id: conversationId, text: `note ${id}`, created_at: 1 });
    await insertNotes(ctx, [row('a', 'c1'), row('b', 'c1'), row('c', 'c2')]);
    await insertNotes(ctx, [row('d', 'c1')]);

    expect(await findNote.rows(ctx, { conversationId: 'c1', limit: 2 })).toEqual([{ id: 'a', text: 'note a' }, { id: 'b', text: 'note b' }]);
    expect(await findNote.rows(ctx, { conversationId: 'c2', limit: 5 })).toEqual([{ id: 'c', text: 'note c' }]);
    expect(await findNote.rows(ctx, { conversationId: 'c1', limit: 5 })).toHaveLength(3);

    // One connection: the statements it prepared by name are the prepared queries it ran.
    const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db);
    const select = rows.find((r) => r.statement.startsWith('select'));
    expect(select?.name).toMatch(/^pp_\d+$/);
    expect(rows.filter((r) => r.statement.startsWith('insert'))).toHaveLength(2); // one per row count
  });
});
