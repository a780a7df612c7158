import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { QueryResult, SqliteDatabase, SqliteStatement } from 'kysely';
import { SqliteCheckpointer, type CheckpointOptions } from './sqlite-checkpointer.ts';

/** How many prepared statements are kept for reuse (Kysely prepares every query it runs). */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Node's built-in `node:sqlite` presented as the small database object Kysely's `SqliteDialect`
 * expects (the better-sqlite3 shape): `prepare()` returning statements with `reader`, `all`,
 * `run` and `iterate`. No native addon.
 */
export class NodeSqliteDatabase implements SqliteDatabase {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, SqliteStatement>();
  /** Prepared queries' statements (`runPrepared`): a fixed set of SQL texts, kept for the connection's life. */
  readonly #direct = new Map<string, StatementSync>();
  readonly #readers = new WeakMap<StatementSync, boolean>();
  readonly #checkpointer: SqliteCheckpointer | null;

  constructor(db: DatabaseSync, checkpointer: SqliteCheckpointer | null = null) {
    this.#db = db;
    this.#checkpointer = checkpointer;
  }

  prepare(sqlText: string): SqliteStatement {
    const cached = this.#statements.get(sqlText);
    if (cached) {
      // Refresh its place in the least-recently-used order.
      this.#statements.delete(sqlText);
      this.#statements.set(sqlText, cached);
      return cached;
    }
    const statement = wrapStatement(this.#db.prepare(sqlText));
    this.#statements.set(sqlText, statement);
    if (this.#statements.size > STATEMENT_CACHE_SIZE) {
      const oldest = this.#statements.keys().next().value;
      if (oldest !== undefined) this.#statements.delete(oldest);
    }
    return statement;
  }

  /**
   * Runs a prepared query's SQL at once, on statements compiled once and kept (decision 020): no
   * builder, no driver round of promises. Undefined when it must take the driver's way instead:
   * outside a transaction while one is open (it would run inside that one), or when another
   * process holds the lock (the driver retries without blocking). `fault` is told of other errors.
   */
  runPrepared(
    sqlText: string,
    parameters: readonly unknown[],
    inTransaction: boolean,
    fault: (error: unknown) => 'retry' | 'throw',
  ): QueryResult<unknown> | undefined {
    if (!inTransaction && this.#db.isTransaction) return undefined;
    let statement = this.#direct.get(sqlText);
    if (!statement) {
      statement = this.#db.prepare(sqlText);
      this.#direct.set(sqlText, statement);
      this.#readers.set(statement, statement.columns().length > 0);
    }
    const values = parameters.map(toSqliteValue);
    try {
      if (this.#readers.get(statement)) return { rows: statement.all(...values) };
      const { changes, lastInsertRowid } = statement.run(...values);
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    } catch (error) {
      if (fault(error) === 'retry' && !inTransaction) return undefined;
      throw error;
    }
  }

  /** True while a transaction is open on the connection. */
  get inTransaction(): boolean {
    return this.#db.isTransaction;
  }

  /** Runs SQL without results (pragmas). */
  exec(sqlText: string): void {
    this.#db.exec(sqlText);
  }

  async close(): Promise<void> {
    this.#statements.clear();
    this.#direct.clear();
    await this.#checkpointer?.stop();
    // The last connection to close checkpoints what is left and removes the WAL.
    if (this.#db.isOpen) this.#db.close();
  }
}

function wrapStatement(statement: StatementSync): SqliteStatement {
  const reader = statement.columns().length > 0;
  const values = (parameters: ReadonlyArray<unknown>) => parameters.map(toSqliteValue);
  return {
    reader,
    all: (parameters) => statement.all(...values(parameters)),
    run: (parameters) => {
      const { changes, lastInsertRowid } = statement.run(...values(parameters));
      return { changes, lastInsertRowid };
    },
    iterate: (parameters) => statement.iterate(...values(parameters)),
  };
}

/** `node:sqlite` binds only null, numbers, bigints, strings and bytes. */
function toSqliteValue(value: unknown): SQLInputValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.getTime();
  if (
    typeof value === 'number' ||
    typeof value === 'bigint' ||
    typeof value === 'string' ||
    value instanceof Uint8Array
  )
    return value;
  throw new TypeError(`cannot bind a ${typeof value} to a SQLite parameter`);
}

/**
 * The page size of a new database. A turn dirties one leaf page in each of the ~25 b-trees it
 * writes, however few bytes it adds to each, and every dirty page is a WAL frame: written, copied
 * and checksummed whole. 1 KiB pages write 56 KiB a turn where SQLite's default 4 KiB wrote 152,
 * and a sequential turn runs 5-30 % faster (decision 020; 512 B and 2 KiB gained less, 8 KiB lost).
 * Rows longer than ~1 KiB (a long reply) spill into overflow pages: the study export and the
 * assistant's transcript recall measured level.
 */
export const SQLITE_PAGE_SIZE = 1024;

/**
 * A PASSIVE checkpoint every 200 ms, and a RESTART once the WAL holds 65,536 frames (64 MiB of
 * 1 KiB pages): the file is then reused from its start (not cut back: truncating it stalled a
 * commit by 50-70 ms).
 */
const CHECKPOINT: CheckpointOptions = { intervalMs: 200, restartFrames: 65_536 };

/**
 * How long SQLite itself waits for a lock, blocking the thread (node:sqlite is synchronous): a
 * few ms, then `SqliteFaults` retries without blocking.
 */
export const SQLITE_BUSY_WAIT_MS = 5;

/**
 * Opens (creating the parent directory of) a database file, or `:memory:`, with the pragmas the
 * store relies on: WAL, NORMAL sync, enforced foreign keys, and a busy wait of a few ms. A file's
 * WAL is checkpointed by a worker thread, never by a commit (see `SqliteCheckpointer`).
 */
export function openNodeSqlite(path: string, checkpoint: CheckpointOptions = CHECKPOINT): NodeSqliteDatabase {
  const memory = path === ':memory:';
  if (!memory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new DatabaseSync(memory ? ':memory:' : resolve(path));
  try {
    // Ignored by a database that has tables already: it keeps the page size it was made with.
    db.exec(`PRAGMA page_size = ${SQLITE_PAGE_SIZE}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    db.exec(`PRAGMA busy_timeout = ${SQLITE_BUSY_WAIT_MS}`);
    // Savepoints' sub-journals (group commit) and sorts stay in memory instead of temporary files.
    db.exec('PRAGMA temp_store = MEMORY');
    if (memory) return new NodeSqliteDatabase(db);
    db.exec('PRAGMA wal_autocheckpoint = 0');
  } catch (error) {
    db.close();
    throw error;
  }
  // Should the worker die, commits checkpoint again as SQLite does by default (1000 pages).
  const fallBack = () => db.isOpen && db.exec('PRAGMA wal_autocheckpoint = 1000');
  return new NodeSqliteDatabase(db, SqliteCheckpointer.start(resolve(path), checkpoint, fallBack));
}
