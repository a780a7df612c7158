import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { prepared } from '../../src/store/prepared.ts';
import type { QueryContext } from '../../src/store/query-context.ts';
import type { Database } from '../../src/store/schema.ts';
import { openNodeSqlite } from '../../src/store/sqlite-database.ts';

const addLease = prepared((db, a: { id: string; owner: string }) =>
  db.insertInto('conversation_leases').values({ conversation_id: a.id, owner: a.owner, lease_until: 1 }),
);
const ownerOf = prepared((db, a: { id: string }) =>
  db.selectFrom('conversation_leases').select('owner').where('conversation_id', '=', a.id),
);

// On SQLite a prepared statement answers at once (`direct`), and its answer is not awaited again:
// what the caller gets must still be a promise, and a statement that fails must reject it, never
// throw where the caller issues it (a pipelined unit of work issues several before awaiting any).
describe('prepared queries on SQLite, answered at once', () => {
  const database = openNodeSqlite(':memory:');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  const ctx: QueryContext = {
    db,
    dialect: 'sqlite',
    inTransaction: false,
    atomic: (work) => work(ctx),
    direct: (sqlText, parameters) => database.runPrepared(sqlText, parameters, false, () => 'throw'),
  };
  afterAll(() => db.destroy());

  it('give promises of their answers, and reject when the statement fails', async () => {
    await sql`create table conversation_leases
                (conversation_id text primary key, owner text not null, lease_until bigint not null)`.execute(db);
    await addLease.write(ctx, { id: 'a', owner: 'p1' });
    const first = ownerOf.first(ctx, { id: 'a' });
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual({ owner: 'p1' });
    expect(await ownerOf.rows(ctx, { id: 'b' })).toEqual([]);

    let twice: Promise<void> | undefined;
    expect(() => (twice = addLease.write(ctx, { id: 'a', owner: 'p2' }))).not.toThrow();
    await expect(twice).rejects.toThrow(/UNIQUE constraint failed/);
    await expect(ownerOf.fenced(ctx, { id: 'b' }, 'participant')).rejects.toMatchObject({ name: 'FenceFailed' });
    expect(await addLease.changed(ctx, { id: 'b', owner: 'p2' })).toBe(1);
  });
});
