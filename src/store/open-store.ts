import { Kysely, SqliteDialect } from 'kysely';
import { OneSchemaPostgresDialect } from './one-schema-dialect.ts';
import pg from 'pg';
import type { Store } from './store.ts';
import type { Database } from './schema.ts';
import { createKyselyStore } from './kysely-store.ts';
import { GoDatabaseError, refuseGoPostgresSchema, refuseGoSqliteFile } from './go-database-check.ts';
import { resolve } from 'node:path';
import { describeError } from '../core/errors.ts';
import { migrateToLatest, type MigrationLogger } from './migrate.ts';
import { openNodeSqlite } from './sqlite-database.ts';
import { classifyFaults } from './classify-faults.ts';
import { isQueryReadTimeout } from './db-errors.ts';
import { SqliteFaults } from './sqlite-faults.ts';
import { statementName } from './prepared.ts';
import { queryStatement } from './pg-batch.ts';
import { PlanLiteralsPlugin } from './plan-literals.ts';
import { pgPipelinedTransactions } from './pg-transaction.ts';

export interface OpenStoreOptions {
  /** PostgreSQL schema to use, created when missing (default `public`). Ignored for SQLite. */
  schema?: string;
  logger?: MigrationLogger;
  /** PostgreSQL connections this process may open (default 10). */
  poolMax?: number;
  /** PostgreSQL: opening a connection, or waiting for a free one (default 5 s). */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: how long one statement may run (default 10 s). The server cancels it; the client
   * abandons the connection `QUERY_TIMEOUT_GRACE_MS` later, when the server could not say so.
   */
  queryTimeoutMs?: number;
  /** SQLite: how long a write retries while another process holds the lock (default 5 s). */
  busyTimeoutMs?: number;
  /**
   * Test seam, SQLite only: called once the store is open with a way to run SQL on its connection
   * (a test limits the file with `PRAGMA max_page_count` to play a full disk).
   */
  onSqliteOpen?: (exec: (sqlText: string) => void) => void;
}

/** Client-side margin over `statement_timeout`: a live server always reports its own cancel first. */
const QUERY_TIMEOUT_GRACE_MS = 1000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;
/** First TCP keepalive probe after this much silence: a dead peer on a real network is found in about a minute. */
const KEEPALIVE_DELAY_MS = 10_000;

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const PG_INT8 = 20;

/**
 * Opens the store a URL names and applies pending migrations:
 * - `sqlite:<path>` (parent directories are created) or `sqlite::memory:`, through `node:sqlite`;
 * - `postgres://…` / `postgresql://…`, through a `pg` pool whose connections all use `schema`.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  // Driver faults leave the adapter classified: callers see `store_unavailable`, never SQLSTATEs.
  if (url.startsWith('sqlite:')) return classifyFaults(await openSqliteStore(url.slice('sqlite:'.length), options));
  if (url.startsWith('postgres://') || url.startsWith('postgresql://'))
    return classifyFaults(await openPostgresStore(url, options));
  throw new Error(
    `unsupported database URL ${JSON.stringify(redact(url))}: ` +
      'expected sqlite:<path>, sqlite::memory: or a postgres:// (postgresql://) URL',
  );
}

/**
 * The SQLite file of `DATABASE_URL` cannot be opened: not a database, a file where a folder of its
 * path should be, no permission. Said in one line naming the variable, not as a driver's stack.
 */
export class SqliteOpenError extends Error {
  override readonly name = 'SqliteOpenError';
}

function openSqliteFile(path: string) {
  try {
    refuseGoSqliteFile(path);
    return openNodeSqlite(path);
  } catch (error) {
    if (error instanceof GoDatabaseError) throw error;
    const file = path === ':memory:' ? path : resolve(path);
    throw new SqliteOpenError(`DATABASE_URL: cannot open ${file} as a SQLite database (${describeError(error)})`, {
      cause: error,
    });
  }
}

async function openSqliteStore(path: string, options: OpenStoreOptions): Promise<Store> {
  if (path === '' || (path.startsWith(':') && path !== ':memory:')) {
    throw new Error(`invalid SQLite URL "sqlite:${path}": expected sqlite:<path> or sqlite::memory:`);
  }
  const database = openSqliteFile(path);
  const faults = new SqliteFaults({ database, busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
  const db = new Kysely<Database>({
    dialect: faults.dialect(new SqliteDialect({ database })),
    plugins: [new PlanLiteralsPlugin()],
  });
  const destroy = async () => {
    await db.destroy();
    await database.close();
  };
  try {
    await migrateToLatest(db, 'sqlite', { logger: options.logger });
  } catch (error) {
    await destroy();
    throw error;
  }
  const store = createKyselyStore(db, 'sqlite', destroy, {
    direct: (sqlText, parameters, inTransaction) =>
      database.runPrepared(sqlText, parameters, inTransaction, faults.directFault),
  });
  options.onSqliteOpen?.((sqlText) => database.exec(sqlText));
  return {
    ...store,
    // A full disk does not stop reads: /health must see that writes fail.
    async ping() {
      await store.ping();
      await faults.checkWritable(db);
    },
  };
}

async function openPostgresStore(url: string, options: OpenStoreOptions): Promise<Store> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema))
    throw new Error(`invalid PostgreSQL schema name ${JSON.stringify(schema)}: use letters, digits and underscores`);
  await ensureSchema(url, schema, options);
  const pool = createPgPool(url, schema, options);
  const dialect = new OneSchemaPostgresDialect({ pool }, schema);
  const plugins = [new PlanLiteralsPlugin()];
  const db = new Kysely<Database>({ dialect, plugins });
  const destroy = () => db.destroy();
  try {
    await refuseGoPostgresSchema(db, schema);
    await migrateToLatest(db, 'postgres', { schema, logger: options.logger });
  } catch (error) {
    await destroy();
    throw error;
  }
  return createKyselyStore(db, 'postgres', destroy, {
    transactions: pgPipelinedTransactions(pool, { dialect, plugins, db }),
  });
}

type PgTimeoutOptions = Pick<OpenStoreOptions, 'connectTimeoutMs' | 'queryTimeoutMs'>;

/**
 * Connection settings every PostgreSQL client of this process uses (the pool, the fan-out's
 * listener): connects and queries that give up instead of waiting for ever on a network that
 * drops packets, and TCP keepalive so that a dead peer is noticed even on an idle connection.
 */
export function pgClientSettings(options: PgTimeoutOptions = {}): pg.ClientConfig {
  return {
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    query_timeout: (options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS) + QUERY_TIMEOUT_GRACE_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  };
}

/**
 * The store's connection pool: every connection resolves unqualified names in `schema`, fails
 * fast when the database is unreachable, and reads int8 as JS numbers. A connection that dies
 * (idle or checked out between two queries) is logged and dropped, never an uncaught 'error'
 * event: the query it was running, if any, rejects, and the pool discards it on release.
 * A connection whose query got no answer in time is closed at once: what it sent may still
 * arrive later (a transaction left open, a write after its rollback), so it is never reused.
 */
export function createPgPool(
  url: string,
  schema: string,
  options: Pick<OpenStoreOptions, 'poolMax' | 'logger'> & PgTimeoutOptions = {},
): pg.Pool {
  const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  const pool = new pg.Pool({
    ...pgClientSettings(options),
    connectionString: url,
    // A runaway statement is cut off, and so is a transaction whose client went silent (its locks with it).
    options:
      `-c search_path="${schema}" -c statement_timeout=${queryTimeoutMs} ` +
      `-c idle_in_transaction_session_timeout=${2 * queryTimeoutMs}`,
    max: options.poolMax ?? 10,
    // A transaction's statements go out without waiting for each answer (decision 020).
    pipeline: true,
    idleTimeoutMillis: 30_000,
    // int8 (counts, epoch-ms timestamps) as JS numbers, for this pool only.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8 && format !== 'binary'
          ? parseInt8
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const lost = (error: Error) => options.logger?.info({ err: error.message }, 'PostgreSQL connection lost');
  pool.on('error', lost);
  // pg-pool listens for errors only on idle clients; a checked-out client needs its own listener.
  pool.on('connect', (client) => {
    client.on('error', lost);
    closeOnReadTimeout(client);
    nameHotStatements(client);
  });
  return pool;
}

/** pg leaves a connection whose query timed out open (and queues the next query behind it): close it. */
function closeOnReadTimeout(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const patched = (...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (isQueryReadTimeout(error))
          (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      });
    }
    return result;
  };
  client.query = patched as typeof client.query;
}

/**
 * Sends the store's prepared queries (`PreparedQuery`) as named statements, each a batch of its
 * own (`queryStatement`), so this connection parses, plans and describes each once; every other
 * query goes as before.
 */
function nameHotStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    const name =
      typeof text === 'string' && Array.isArray(values) && args.length === 2 ? statementName(text) : undefined;
    return name ? queryStatement(client, { name, text: text as string, values: values as unknown[] }) : query(...args);
  };
}

function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} does not fit a JS number`);
  return value;
}

/** `CREATE SCHEMA IF NOT EXISTS`, over a short-lived client (concurrent creators may still race). */
async function ensureSchema(url: string, schema: string, options: PgTimeoutOptions): Promise<void> {
  const client = new pg.Client({ ...pgClientSettings(options), connectionString: url });
  client.on('error', () => undefined); // a lost connection rejects the pending query instead
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_namespace where nspname = $1', [schema]);
    if (exists.rowCount) return;
    try {
      await client.query(`create schema if not exists "${schema}"`);
    } catch (error) {
      // Two creators at once: the loser gets a unique violation even with IF NOT EXISTS.
      const again = await client.query('select 1 from pg_namespace where nspname = $1', [schema]);
      if (!again.rowCount) throw error;
    }
  } finally {
    await client.end();
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
}
