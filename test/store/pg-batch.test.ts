// @requires postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { createPgPool } from '../../src/store/open-store.ts';
import { PgBatch, SkippedAfterFailure, type BatchAnswer, type BatchStatement } from '../../src/store/pg-batch.ts';
import { pgPipelinedTransactions } from '../../src/store/pg-transaction.ts';
import type { DirectQuery } from '../../src/store/query-context.ts';
import type { Database } from '../../src/store/schema.ts';
import { PG_URL } from '../kit/requirements.ts';

const SCHEMA = `batch_${process.pid}`;

/** Sends `statements` as one batch; each statement's outcome, and the batch's own. */
function runBatch(client: pg.PoolClient, statements: BatchStatement[]) {
  const answers = statements.map(() => {
    let settle!: { resolve(answer: BatchAnswer): void; reject(error: unknown): void };
    const answer = new Promise<BatchAnswer>((resolve, reject) => (settle = { resolve, reject }));
    return {
      answer: answer.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      settle,
    };
  });
  const batch = new PgBatch(
    statements,
    answers.map(({ settle }) => settle),
    { getTypeParser: (oid, format) => client.getTypeParser(oid, format) },
  );
  const ended = new Promise<Error | null>((resolve) => (batch.callback = resolve));
  void client.query(batch);
  return { batch, ended, outcomes: Promise.all(answers.map(({ answer }) => answer)) };
}

/** Sends `statements` as one batch that must end without a failure; each statement's outcome. */
async function runClean(client: pg.PoolClient, statements: BatchStatement[]) {
  const { ended, outcomes } = runBatch(client, statements);
  expect(await ended).toBeNull();
  return outcomes;
}

describe('a batch of statements on PostgreSQL (one Sync)', () => {
  const pool = createPgPool(PG_URL, SCHEMA, { poolMax: 1 });
  beforeAll(async () => {
    await pool.query(`create schema if not exists "${SCHEMA}"`);
    await pool.query('create table items (id text primary key, n bigint not null)');
  });
  afterAll(async () => {
    await pool.query(`drop schema if exists "${SCHEMA}" cascade`);
    await pool.end();
  });

  it('answers every statement in order, rows parsed by the client (int8 as a number)', async () => {
    const client = await pool.connect();
    try {
      const outcomes = runClean(client, [
        { text: 'insert into items (id, n) values ($1, $2), ($3, $4)', values: ['a', 1, 'b', 2] },
        { text: 'select id, n from items order by id', values: [] },
        { text: 'delete from items where id = $1', values: ['b'] },
      ]);
      const [insert, select, remove] = await outcomes;
      expect(insert).toEqual({ value: { command: 'INSERT', rowCount: 2, rows: [] } });
      expect(select).toEqual({
        value: {
          command: 'SELECT',
          rowCount: 2,
          rows: [
            { id: 'a', n: 1 },
            { id: 'b', n: 2 },
          ],
        },
      });
      expect(remove).toEqual({ value: { command: 'DELETE', rowCount: 1, rows: [] } });
    } finally {
      client.release();
    }
  });

  it('fails the statement that failed and skips those behind it; the server ran none of them', async () => {
    const client = await pool.connect();
    try {
      const { ended, outcomes } = runBatch(client, [
        { text: 'begin', values: [] },
        { text: 'insert into items (id, n) values ($1, $2)', values: ['c', 3] },
        { text: 'insert into items (id, n) values ($1, $2)', values: ['a', 9] }, // a duplicate key
        { text: 'insert into items (id, n) values ($1, $2)', values: ['d', 4] },
        { text: 'commit', values: [] },
      ]);
      const [begin, first, duplicate, behind, commit] = await outcomes;
      expect(await ended).toMatchObject({ code: '23505' });
      expect(begin).toHaveProperty('value');
      expect(first).toHaveProperty('value');
      expect(duplicate).toMatchObject({ error: { code: '23505' } });
      expect(behind).toEqual({ error: expect.any(SkippedAfterFailure) });
      expect(commit).toEqual({ error: expect.any(SkippedAfterFailure) });
      // The transaction is aborted, not committed: undo it, and nothing of it is there.
      await client.query('rollback');
      expect((await client.query('select id from items order by id')).rows).toEqual([{ id: 'a' }]);
    } finally {
      client.release();
    }
  });

  it('prepares a named statement once; one skipped after a failure is prepared again when next used', async () => {
    const client = await pool.connect();
    const count = {
      text: 'select count(*)::int as n from items where id > $1',
      values: ['0'],
      name: `t_${process.pid}`,
    };
    try {
      const failed = runBatch(client, [{ text: 'select 1/0', values: [] }, count]);
      expect(await failed.ended).toMatchObject({ code: '22012' });
      await client.query('rollback').catch(() => undefined);

      for (let run = 0; run < 2; run++) {
        const outcomes = runClean(client, [count]);
        expect(await outcomes).toEqual([{ value: { command: 'SELECT', rowCount: 1, rows: [{ n: 1 }] } }]);
      }
      expect(await preparedCount(client, count.name)).toBe(1);
    } finally {
      client.release();
    }
  });

  it('closes a named statement whose first use failed before parsing it again: the connection stays good', async () => {
    const client = await pool.connect();
    const divide = { text: 'select 1 / $1::int as q', name: `div_${process.pid}` };
    try {
      // Parse and Bind succeed, Execute fails: the name is prepared, which the client cannot see.
      const failed = runBatch(client, [{ ...divide, values: [0] }]);
      expect(await failed.ended).toMatchObject({ code: '22012' });
      expect(await preparedCount(client, divide.name)).toBe(1);
      for (const divisor of [1, 1]) {
        const outcomes = runClean(client, [{ ...divide, values: [divisor] }]);
        expect(await outcomes).toEqual([{ value: { command: 'SELECT', rowCount: 1, rows: [{ q: 1 }] } }]);
      }
      expect(await preparedCount(client, divide.name)).toBe(1);
    } finally {
      client.release();
    }
  });

  it("fails a statement whose rows the client's parser refuses, and answers the rest of the batch", async () => {
    const client = await pool.connect();
    try {
      const outcomes = runClean(client, [
        { text: 'select 9007199254740993::int8 as n', values: [] }, // beyond 2^53: the pool's parser refuses it
        { text: 'select 2::int8 as n', values: [] },
      ]);
      const [refused, answered] = await outcomes;
      expect(refused).toMatchObject({ error: { message: expect.stringMatching(/does not fit/) } });
      expect(answered).toEqual({ value: { command: 'SELECT', rowCount: 1, rows: [{ n: 2 }] } });
    } finally {
      client.release();
    }
  });

  it('fails a batch with a parameter pg cannot write, before sending anything', async () => {
    const client = await pool.connect();
    try {
      const { ended, outcomes } = runBatch(client, [
        { text: 'select 1 as one', values: [] },
        { text: 'select $1::jsonb as j', values: [{ big: 1n }] },
      ]);
      expect(await ended).toMatchObject({ message: expect.stringMatching(/BigInt/) });
      expect((await outcomes).every((outcome) => 'error' in outcome)).toBe(true);
      expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    } finally {
      client.release();
    }
  });

  it('describes a named statement once per connection, then builds its rows from what it learned', async () => {
    const client = await pool.connect();
    const wire = (client as unknown as { connection: { describe(message: unknown): void } }).connection;
    const describe = wire.describe.bind(wire);
    let described = 0;
    wire.describe = (message) => (described++, describe(message));
    const select = { text: 'select id, n, null::text as gone from items where id = $1', name: `sel_${process.pid}` };
    const touch = { text: 'update items set n = n where id = $1', name: `upd_${process.pid}` };
    try {
      for (let run = 0; run < 3; run++) {
        const outcomes = runClean(client, [
          { ...select, values: ['a'] },
          { ...touch, values: ['a'] },
        ]);
        expect(await outcomes).toEqual([
          { value: { command: 'SELECT', rowCount: 1, rows: [{ id: 'a', n: 1, gone: null }] } },
          { value: { command: 'UPDATE', rowCount: 1, rows: [] } },
        ]);
      }
      // Each once: the select's columns, and the update's NoData.
      expect(described).toBe(2);
    } finally {
      wire.describe = describe;
      client.release();
    }
  });
});

describe('a pipelined transaction on PostgreSQL', () => {
  const pool = createPgPool(PG_URL, `${SCHEMA}_t`, { poolMax: 1 });
  const dialect = new PostgresDialect({ pool });
  const db = new Kysely<Database>({ dialect });
  const transaction = pgPipelinedTransactions(pool, { dialect, plugins: [], db });
  const direct = (work: (direct: DirectQuery) => Promise<unknown>) => transaction((_trx, query) => work(query!));
  const backend = async () => {
    const answer = await direct(async (query) => query('select pg_backend_pid() as pid', []));
    return (answer as { rows: { pid: number }[] }).rows[0]!.pid;
  };
  const ids = async () => {
    const { rows } = await pool.query<{ id: string }>('select id from items order by id');
    return rows.map((row) => row.id);
  };
  beforeAll(async () => {
    await pool.query(`create schema if not exists "${SCHEMA}_t"`);
    await pool.query("create table items (id text primary key); insert into items values ('a')");
  });
  afterAll(async () => {
    await pool.query(`drop schema if exists "${SCHEMA}_t" cascade`);
    await db.destroy();
  });

  it('rolls back a write that failed in the batch of its COMMIT, and keeps the connection', async () => {
    const before = await backend();
    await expect(
      direct(async (query) => {
        await query("insert into items values ('b')", [], true);
        await query("insert into items values ('a')", [], true); // a duplicate key, sent with the COMMIT
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await ids()).toEqual(['a']);
    expect(await backend()).toBe(before);
  });

  it('commits nothing when a deferred parameter cannot be written, though the server never saw it fail', async () => {
    await expect(
      direct(async (query) => {
        await query("insert into items values ('c')", [], true);
        await query('select $1::jsonb', [{ big: 1n }], true);
      }),
    ).rejects.toThrow(/BigInt/);
    expect(await ids()).toEqual(['a']);
  });
});

/** How many statements the connection has prepared under `name`. */
async function preparedCount(client: pg.PoolClient, name: string): Promise<number> {
  const { rows } = await client.query('select count(*)::int as n from pg_prepared_statements where name = $1', [name]);
  return (rows[0] as { n: number }).n;
}
