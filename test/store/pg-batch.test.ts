// @requires postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPgPool } from '../../src/store/open-store.ts';
import { PgBatch, SkippedAfterFailure, type BatchAnswer, type BatchStatement } from '../../src/store/pg-batch.ts';
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
      const { ended, outcomes } = runBatch(client, [
        { text: 'insert into items (id, n) values ($1, $2), ($3, $4)', values: ['a', 1, 'b', 2] },
        { text: 'select id, n from items order by id', values: [] },
        { text: 'delete from items where id = $1', values: ['b'] },
      ]);
      expect(await ended).toBeNull();
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
      expect(failed.batch.uncertain).toBe(false); // the failing statement was not a named one parsed here
      await client.query('rollback').catch(() => undefined);

      for (let run = 0; run < 2; run++) {
        const { ended, outcomes } = runBatch(client, [count]);
        expect(await ended).toBeNull();
        expect(await outcomes).toEqual([{ value: { command: 'SELECT', rowCount: 1, rows: [{ n: 1 }] } }]);
      }
      const prepared = await client.query('select count(*)::int as n from pg_prepared_statements where name = $1', [
        count.name,
      ]);
      expect(prepared.rows).toEqual([{ n: 1 }]);
    } finally {
      client.release();
    }
  });

  it('leaves a named statement in doubt when its own first use fails: the batch says so', async () => {
    const client = await pool.connect();
    try {
      const { batch, ended } = runBatch(client, [
        { text: 'select 1 / $1::int as q', values: [0], name: `div_${process.pid}` },
      ]);
      expect(await ended).toMatchObject({ code: '22012' });
      expect(batch.uncertain).toBe(true);
    } finally {
      client.release(true);
    }
  });
});
