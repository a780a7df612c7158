import { readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { randomIds } from '../../src/core/clock.ts';

const FIXTURES = new URL('../fixtures/go-promptpipe/', import.meta.url);
/** The import's options in every importer test: the fixture's region, its "now", no randomness. */
export const IMPORT_OPTIONS = {
  region: 'US' as const,
  ids: randomIds,
  now: new Date('2026-03-20T12:00:00Z'),
  prepMinutes: 10,
  random: () => 0.5,
  channel: 'webhook',
};

export const GO_SQLITE_FIXTURE = new URL('state.db', FIXTURES).pathname;
const GO_POSTGRES_SCHEMA = new URL('schema-postgres.sql', FIXTURES).pathname;

/** The Go tables with data, in an order that keeps their foreign keys satisfied. */
const TABLES = [
  'conversation_participants',
  'flow_states',
  'registered_hooks',
  'jobs',
  'receipts',
  'responses',
  'inbound_dedup',
];

/**
 * The SQLite fixture as the Go server's PostgreSQL store would hold it (fixture README §5): the Go
 * PostgreSQL schema in `schema`, every row copied, DATETIME text as `TIMESTAMP` in the Go
 * process's zone (UTC here), JSON columns as JSONB (`''` state as NULL).
 */
export async function loadGoFixtureIntoPostgres(url: string, schema: string): Promise<void> {
  const source = new DatabaseSync(GO_SQLITE_FIXTURE, { readOnly: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`create schema "${schema}"`);
    await client.query(`set search_path to "${schema}"`);
    await client.query(readFileSync(GO_POSTGRES_SCHEMA, 'utf8'));
    for (const table of TABLES) await copyTable(source, client, schema, table);
  } finally {
    source.close();
    await client.end();
  }
}

async function copyTable(source: DatabaseSync, client: pg.Client, schema: string, table: string): Promise<void> {
  const rows = source.prepare(`select * from ${table}`).all() as Array<Record<string, unknown>>;
  if (rows.length === 0) return;
  const types = new Map(
    (
      await client.query<{ column_name: string; data_type: string }>(
        'select column_name, data_type from information_schema.columns where table_schema = $1 and table_name = $2',
        [schema, table],
      )
    ).rows.map((row) => [row.column_name, row.data_type]),
  );
  const columns = Object.keys(rows[0]!);
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const cells = columns.map((column) => {
      values.push(row[column]);
      return cast(`$${values.length}`, types.get(column));
    });
    return `(${cells.join(', ')})`;
  });
  await client.query(`insert into ${table} (${columns.join(', ')}) values ${tuples.join(', ')}`, values);
}

function cast(parameter: string, type: string | undefined): string {
  if (type === 'timestamp without time zone') return `(${parameter}::timestamptz at time zone 'UTC')`;
  if (type === 'jsonb') return `nullif(${parameter}::text, '')::jsonb`;
  return parameter;
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}
