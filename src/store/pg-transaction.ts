import { Kysely, type DatabaseConnection, type Dialect, type KyselyPlugin, type QueryResult } from 'kysely';
import type { Writable } from 'node:stream';
import type pg from 'pg';
import type { Database } from './schema.ts';
import type { DirectQuery, TransactionRunner, TransactionWork } from './query-context.ts';
import { asFenceFailure } from './fence.ts';

const EMPTY: QueryResult<never> = { rows: [] };
const CHANGES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * One PostgreSQL transaction on one connection in `pg`'s pipeline mode (decision 020): every
 * statement is written to the socket when it is issued, without waiting for the answer to the
 * one before, and the answers come back in order. `BEGIN` goes out with the first statements and
 * `COMMIT` right behind the last, so a unit of work whose code does not wait for a result costs
 * one round trip; a result the code awaits costs one more, shared by everything sent before it.
 *
 * Statements whose answer nobody needs (`deferred`) resolve as soon as they are sent. Nothing is
 * lost by that: every statement sent is kept, and the transaction commits only when each of them
 * succeeded. The first statement that fails aborts the transaction on the server (every later one
 * fails too, and `COMMIT` becomes a rollback); that first error is what the caller sees.
 */
class PipelinedTransaction implements DatabaseConnection {
  readonly #client: pg.PoolClient;
  readonly #sent: Promise<unknown>[] = [];
  #failure: { error: unknown } | undefined;
  #corked = false;
  /** True once the transaction's last `COMMIT` or `ROLLBACK` got an answer: the connection can be reused. */
  ended = false;

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  /** Sends one statement now; its answer, mapped as Kysely's driver maps it. */
  send(sqlText: string, parameters: readonly unknown[] = []): Promise<QueryResult<unknown>> {
    this.#cork();
    const answer = (this.#client.query(sqlText, parameters as unknown[]) as Promise<pg.QueryResult>).then(
      ({ command, rowCount, rows }) => ({
        rows: rows ?? [],
        numAffectedRows: CHANGES.has(command) ? BigInt(rowCount ?? 0) : undefined,
      }),
    );
    this.#sent.push(answer);
    answer.catch((error: unknown) => {
      this.#failure ??= { error: asFenceFailure(error) };
    });
    return answer;
  }

  /**
   * Statements sent before the code next waits go out in one socket write (pg writes each on its
   * own): the socket is corked until the event loop has run everything that was ready to run.
   */
  #cork(): void {
    if (this.#corked) return;
    const stream = (this.#client as unknown as { connection: { stream: Writable } }).connection.stream;
    stream.cork();
    this.#corked = true;
    setImmediate(() => {
      this.#corked = false;
      stream.uncork();
    });
  }

  /** `QueryContext.direct`: a prepared query's SQL, its answer awaited only when the caller needs it. */
  readonly direct: DirectQuery = (sqlText, parameters, deferred) => {
    const answer = this.send(sqlText, parameters);
    return deferred ? Promise.resolve(EMPTY) : answer;
  };

  executeQuery<R>(compiled: { sql: string; parameters: readonly unknown[] }): Promise<QueryResult<R>> {
    return this.send(compiled.sql, compiled.parameters) as Promise<QueryResult<R>>;
  }

  streamQuery(): never {
    throw new Error('streaming is not supported inside a pipelined transaction');
  }

  /** Sends `COMMIT` behind everything sent, then waits for all of it: the first failure undid the transaction. */
  async commit(): Promise<void> {
    const commit = this.send('commit');
    await Promise.allSettled(this.#sent);
    this.ended = await commit.then(
      () => true,
      () => false,
    );
    if (this.#failure) throw this.#failure.error;
  }

  /** After `work` threw: undoes what was sent and says what went wrong first (the cause of any later failure). */
  async rollback(thrown: unknown): Promise<unknown> {
    await Promise.allSettled(this.#sent);
    this.ended = await this.#client.query('rollback').then(
      () => true,
      () => false,
    );
    return this.#failure?.error ?? thrown;
  }
}

export interface PgTransactionTemplate {
  dialect: Dialect;
  plugins: KyselyPlugin[];
  /** The store's Kysely: its executor (compiler, adapter, plugins) serves each transaction's. */
  db: Kysely<Database>;
}

/**
 * Transactions on `pool` (whose clients are in pipeline mode), each with a Kysely of its own whose
 * queries go to the transaction's connection the moment they are built, in the order they are
 * issued, as `PipelinedTransaction.direct` does for prepared ones.
 */
export function pgPipelinedTransactions(pool: pg.Pool, template: PgTransactionTemplate): TransactionRunner {
  const config = { dialect: template.dialect, plugins: template.plugins };
  const driver = template.dialect.createDriver(); // never initialized: a nested transaction fails loudly
  const executor = template.db.getExecutor();
  return async <T>(work: TransactionWork<T>): Promise<T> => {
    const client = await pool.connect();
    const transaction = new PipelinedTransaction(client);
    try {
      void transaction.send('begin').catch(() => undefined);
      const trx = new Kysely<Database>({
        config,
        driver,
        dialect: template.dialect,
        executor: executor.withConnectionProvider({ provideConnection: (consumer) => consumer(transaction) }),
      });
      let result: T;
      try {
        result = await work(trx, transaction.direct);
      } catch (thrown) {
        throw await transaction.rollback(thrown);
      }
      await transaction.commit();
      return result;
    } finally {
      // A connection whose transaction did not end cleanly (lost, timed out) is not reused.
      client.release(transaction.ended ? undefined : true);
    }
  };
}
