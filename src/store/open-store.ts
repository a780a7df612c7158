import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Store } from './store.ts';
import type { Database } from './schema.ts';
import { createKyselyStore } from './kysely-store.ts';
import { migrateToLatest, type MigrationLogger } from './migrate.ts';
import { openNodeSqlite } from './sqlite-database.ts';
import { statementName } from './prepared.ts';

export interface OpenStoreOptions {
  /** PostgreSQL schema to use, created when missing (default `public`). Ignored for SQLite. */
  schema?: string;
  logger?: MigrationLogger;
  /** PostgreSQL connections this process may open (default 10). */
  poolMax?: number;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const PG_INT8 = 20;

/**
 * Opens the store a URL names and applies pending migrations:
 * - `sqlite:<path>` (parent directories are created) or `sqlite::memory:`, through `node:sqlite`;
 * - `postgres://…` / `postgresql://…`, through a `pg` pool whose connections all use `schema`.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) return openSqliteStore(url.slice('sqlite:'.length), options);
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgresStore(url, options);
  throw new Error(`unsupported database URL ${JSON.stringify(redact(url))}: expected sqlite:<path>, sqlite::memory: or a postgres:// (postgresql://) URL`);
}

async function openSqliteStore(path: string, options: OpenStoreOptions): Promise<Store> {
  if (path === '' || (path.startsWith(':') && path !== ':memory:')) {
    throw new Error(`invalid SQLite URL "sqlite:${path}": expected sqlite:<path> or sqlite::memory:`);
  }
  const database = openNodeSqlite(path);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
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
  return createKyselyStore(db, 'sqlite', destroy);
}

async function openPostgresStore(url: string, options: OpenStoreOptions): Promise<Store> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid PostgreSQL schema name ${JSON.stringify(schema)}: use letters, digits and underscores`);
  await ensureSchema(url, schema);
  const pool = createPgPool(url, schema, options);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const destroy = () => db.destroy();
  try {
    await migrateToLatest(db, 'postgres', { schema, logger: options.logger });
  } catch (error) {
    await destroy();
    throw error;
  }
  return createKyselyStore(db, 'postgres', destroy);
}

/**
 * The store's connection pool: every connection resolves unqualified names in `schema`, fails
 * fast when the database is unreachable, and reads int8 as JS numbers. A connection that dies
 * (idle or checked out between two queries) is logged and dropped, never an uncaught 'error'
 * event: the query it was running, if any, rejects, and the pool discards it on release.
 */
export function createPgPool(url: string, schema: string, options: Pick<OpenStoreOptions, 'poolMax' | 'logger'> = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    // A runaway statement is cut off rather than holding a connection for ever.
    options: `-c search_path="${schema}" -c statement_timeout=30000`,
    max: options.poolMax ?? 10,
    // An unreachable database fails requests in seconds (503) instead of queueing them.
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    // int8 (counts, epoch-ms timestamps) as JS numbers, for this pool only.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8 && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const lost = (error: Error) => options.logger?.info({ err: error.message }, 'PostgreSQL connection lost');
  pool.on('error', lost);
  // pg-pool listens for errors only on idle clients; a checked-out client needs its own listener.
  pool.on('connect', (client) => {
    client.on('error', lost);
    nameHotStatements(client);
  });
  return pool;
}

/**
 * Sends the store's prepared queries (`PreparedQuery`) as named statements, so this connection
 * parses and plans each once; every other query goes as before.
 */
function nameHotStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    const name = typeof text === 'string' && Array.isArray(values) && args.length === 2 ? statementName(text) : undefined;
    return name ? query({ name, text, values }) : query(...args);
  };
}

function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} does not fit a JS number`);
  return value;
}

/** `CREATE SCHEMA IF NOT EXISTS`, over a short-lived client (concurrent creators may still race). */
async function ensureSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
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
