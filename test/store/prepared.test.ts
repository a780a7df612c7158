// @requires postgres
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../src/store/open-store.ts';
import { prepared, preparedInsert } from '../../src/store/prepared.ts';
import type { QueryContext } from '../../src/store/query-context.ts';
import type { Database } from '../../src/store/schema.ts';
import { PG_URL } from '../kit/requirements.ts';

const SCHEMA = `prepared_${process.pid}`;

// A table of the store's schema, created bare in a schema of this test's own (no migrations needed).
const findLeases = prepared((db, a: { owner: string; limit: number }) =>
  db
    .selectFrom('conversation_leases')
    .select(['conversation_id', 'lease_until'])
    .where('owner', '=', a.owner)
    .orderBy('conversation_id')
    .limit(a.limit),
);
const insertLeases = preparedInsert('conversation_leases');

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
    await sql`create table conversation_leases
                (conversation_id text primary key, owner text not null, lease_until bigint not null)`.execute(db);
    const row = (id: string, owner: string, until: number) => ({ conversation_id: id, owner, lease_until: until });
    await insertLeases(ctx, [row('a', 'p1', 1), row('b', 'p1', 2), row('c', 'p2', 3)]);
    await insertLeases(ctx, [row('d', 'p1', 4)]);

    expect(await findLeases.rows(ctx, { owner: 'p1', limit: 2 })).toEqual([
      { conversation_id: 'a', lease_until: 1 },
      { conversation_id: 'b', lease_until: 2 },
    ]);
    expect(await findLeases.rows(ctx, { owner: 'p2', limit: 5 })).toEqual([{ conversation_id: 'c', lease_until: 3 }]);
    expect(await findLeases.rows(ctx, { owner: 'p1', limit: 5 })).toHaveLength(3);

    // One connection: the statements it prepared by name are the prepared queries it ran.
    const { rows } = await sql<{
      name: string;
      statement: string;
    }>`select name, statement from pg_prepared_statements`.execute(db);
    const select = rows.find((r) => r.statement.startsWith('select'));
    expect(select?.name).toMatch(/^pp_\d+$/);
    expect(rows.filter((r) => r.statement.startsWith('insert'))).toHaveLength(2); // one per row count
  });
});
