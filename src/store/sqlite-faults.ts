import { setTimeout as sleep } from 'node:timers/promises';
import {
  sql,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { databaseFault } from './db-errors.ts';
import type { Database } from './schema.ts';

/** What the wrapped driver needs of the database: whether a transaction is open on it. */
export interface SqliteTransactionState {
  readonly inTransaction: boolean;
}

export interface SqliteFaultsOptions {
  database: SqliteTransactionState;
  /** How long a statement refused for a lock another process holds is retried (0 = never). */
  busyTimeoutMs: number;
}

/** Back-off between attempts at a locked database: short first, since locks are usually brief. */
const FIRST_PAUSE_MS = 5;
const MAX_PAUSE_MS = 100;
/** Large enough to need a page of its own: the probe fails where the file cannot grow. */
const PROBE_BYTES = 8192;

/**
 * SQLite's two faults that are not bugs, handled without blocking the server (node:sqlite is
 * synchronous: SQLite's own busy wait would freeze the event loop, every request with it):
 * - a lock another process holds (SQLITE_BUSY): each attempt waits only a few ms inside SQLite
 *   (`busy_timeout`), then the statement is retried after an asynchronous pause, with the
 *   connection free for others meanwhile, up to `busyTimeoutMs`; then the error goes up (503);
 * - a write that failed for lack of space or an I/O error is remembered until a write succeeds,
 *   and `/health` reports it until a probe write that needs a page of its own succeeds (a small
 *   write succeeding proves nothing: it may fit in a page the file already had free).
 */
export class SqliteFaults {
  readonly #options: SqliteFaultsOptions;
  #writeFault: Error | undefined;

  constructor(options: SqliteFaultsOptions) {
    this.#options = options;
  }

  /** `dialect` with the driver wrapped: retries on a lock, faults recorded. */
  dialect(dialect: Dialect): Dialect {
    return {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => new RetryingDriver(dialect.createDriver(), this),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createIntrospector: (db) => dialect.createIntrospector(db),
    };
  }

  /**
   * Throws when the last write failed for lack of space (or I/O) and a probe write (a row that
   * needs a page of its own, written and deleted in one transaction) still fails.
   */
  async checkWritable(db: Kysely<Database>): Promise<void> {
    if (!this.#writeFault) return;
    await db.connection().execute(async (connection) => {
      await sql`begin immediate`.execute(connection);
      try {
        await connection
          .insertInto('write_probes')
          .values({ id: 'probe', filler: sql<string>`printf('%.*c', ${PROBE_BYTES}, 'x')` })
          .execute();
        await connection.deleteFrom('write_probes').execute();
        await sql`commit`.execute(connection);
        this.#writeFault = undefined;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
  }

  /**
   * What to do about an error of a statement run outside the driver (`runPrepared`): a write
   * fault is remembered as the driver's are; a lock another process holds is retried the driver's way.
   */
  readonly directFault = (error: unknown): 'retry' | 'throw' => {
    const fault = databaseFault(error);
    if (fault === 'full' || fault === 'io') this.#writeFault = error as Error;
    return fault === 'busy' ? 'retry' : 'throw';
  };

  /** @internal Runs one statement, retrying while another process holds the lock. */
  async execute(connection: LockedConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    const deadline = Date.now() + this.#options.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await connection.current.executeQuery(query);
        return result;
      } catch (error) {
        const fault = databaseFault(error);
        if (fault === 'full' || fault === 'io') this.#writeFault = error as Error;
        // Inside a transaction a retry could interleave with it: the transaction fails instead.
        if (fault !== 'busy' || this.#options.database.inTransaction || Date.now() >= deadline) throw error;
        const pause = Math.min(FIRST_PAUSE_MS * 2 ** attempt, MAX_PAUSE_MS, Math.max(deadline - Date.now(), 1));
        await connection.pause(pause * (0.5 + Math.random() / 2));
      }
    }
  }
}

/** The driver's one connection as held by a caller; let go of during a pause, so others run. */
class LockedConnection implements DatabaseConnection {
  current: DatabaseConnection;
  readonly #driver: Driver;
  readonly #faults: SqliteFaults;

  constructor(connection: DatabaseConnection, driver: Driver, faults: SqliteFaults) {
    this.current = connection;
    this.#driver = driver;
    this.#faults = faults;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#faults.execute(this, query) as Promise<QueryResult<R>>;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.current.streamQuery<R>(query, chunkSize);
  }

  async pause(ms: number): Promise<void> {
    await this.#driver.releaseConnection(this.current);
    try {
      await sleep(ms);
    } finally {
      this.current = await this.#driver.acquireConnection();
    }
  }
}

class RetryingDriver implements Driver {
  readonly #driver: Driver;
  readonly #faults: SqliteFaults;

  constructor(driver: Driver, faults: SqliteFaults) {
    this.#driver = driver;
    this.#faults = faults;
  }

  init(): Promise<void> {
    return this.#driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new LockedConnection(await this.#driver.acquireConnection(), this.#driver, this.#faults);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#driver.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#driver.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#driver.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#driver.releaseConnection((connection as LockedConnection).current);
  }

  destroy(): Promise<void> {
    return this.#driver.destroy();
  }
}
