// @requires postgres
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { PG_URL } from '../kit/requirements.ts';

// Other clients of the database come and go with their own schemas (tests, other apps, tenants):
// opening the store, which checks its migrations, must not depend on them.
const SCHEMA = `own_${process.pid}`;
const CHURN = `churn_${process.pid}`;
let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await (await openStore(PG_URL, { schema: SCHEMA })).close();
});

afterAll(async () => {
  await admin.query(`drop schema if exists "${SCHEMA}" cascade; drop schema if exists "${CHURN}" cascade`);
  await admin.end();
});

describe('PostgreSQL: the store and the other schemas of its database', () => {
  it('opens while another client creates and drops schemas with tables', async () => {
    let stop = false;
    let churned = 0;
    const churn = (async () => {
      for (; !stop; churned++) {
        await admin.query(`create schema "${CHURN}"; create table "${CHURN}".t (a serial primary key, b text)`);
        await admin.query(`drop schema "${CHURN}" cascade`);
      }
    })();
    const failures: string[] = [];
    try {
      for (let opened = 0; opened < 25; opened++) {
        const store = await openStore(PG_URL, { schema: SCHEMA }).catch((error: unknown) => {
          failures.push(String(error));
          return undefined;
        });
        await store?.close();
      }
    } finally {
      stop = true;
      await churn;
    }
    expect(churned).toBeGreaterThan(25);
    expect(failures).toEqual([]);
  }, 60_000);

  it("finds its migrations table in its own schema, not a same-named table in another's", async () => {
    await admin.query(`create schema "${CHURN}"; create table "${CHURN}".migrations (name text)`);
    const fresh = `${SCHEMA}_fresh`;
    try {
      const store = await openStore(PG_URL, { schema: fresh });
      await store.close();
      const { rows } = await admin.query(`select count(*)::int as n from "${fresh}".migrations`);
      expect(rows[0].n).toBeGreaterThan(20);
    } finally {
      await admin.query(`drop schema if exists "${fresh}" cascade; drop schema "${CHURN}" cascade`);
    }
  });
});
