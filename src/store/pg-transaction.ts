import { Kysely, type DatabaseConnection, type Dialect, type KyselyPlugin, type QueryResult } from 'kysely';
import type pg from 'pg';
import type { Database } from './schema.ts';
import type { DirectQuery, TransactionRunner, TransactionWork } from './query-context.ts';
import { asFenceFailure } from './fence.ts';
import {
  serializeParameters,
  SkippedAfterFailure,
  submitBatch,
  type BatchAnswer,
  type BatchSettled,
  type BatchStatement,
} from './pg-batch.ts';
import { statementName } from './prepared.ts';

const EMPTY: QueryResult<never> = { rows: [] };

const CHANGES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * One PostgreSQL transaction on one connection in `pg`'s pipeline mode (decision 020): statements
 * issued before the code next waits (the event loop has run everything that was ready) go out as
 * one batch (`PgBatch`: one write, one Sync, answered in one flush), without waiting for the answer
 * to an earlier batch. `BEGIN` goes out with the first statements and `COMMIT` right behind the
 * last, so a unit of work whose code does not wait for a result costs one round trip; a result the
 * code awaits costs one more, shared by everything sent before it.
 *
 * Statements whose answer nobody needs (`deferred`) resolve as soon as they are issued. Nothing
 * is lost by that: every statement issued is kept, and the transaction commits only when each of
 * them succeeded. The first statement that fails aborts the transaction on the server (every later
 * one is skipped or fails, and `COMMIT` becomes a rollback); that first error is what the caller sees.
 */
class PipelinedTransaction implements DatabaseConnection {
  readonly #client: pg.PoolClient;
  readonly #sent: Promise<unknown>[] = [];
  #failure: { error: unknown } | undefined;
  /** The batch being gathered, sent when the event loop comes round. */
  #gathering: { statements: BatchStatement[]; settled: BatchSettled[] } | undefined;
  #ended = false;

  constructor(client: pg.PoolClient) {
    this.#client = client;
  }

  /** True once the transaction's last `COMMIT` or `ROLLBACK` got an answer: the connection can be reused. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Issues one statement (sent with the batch it joins); its answer, mapped as Kysely's driver maps it. */
  send(sqlText: string, parameters: readonly unknown[] = []): Promise<QueryResult<unknown>> {
    let values: unknown[];
    try {
      // Here, not only in the batch: a failure must be known before `COMMIT` is issued. (The
      // batch's own pass over these is an identity: text, Buffers and nulls stay as they are.)
      values = serializeParameters(parameters);
    } catch (error) {
      // Nothing of it was sent, so the server's transaction is not aborted: `COMMIT` must not go.
      this.#failure ??= { error };
      const failed = Promise.reject(error);
      failed.catch(() => undefined); // a deferred statement's caller never awaits it
      return failed;
    }
    const batch = (this.#gathering ??= this.#gather());
    const answer = new Promise<BatchAnswer>((resolve, reject) => batch.settled.push({ resolve, reject })).then(
      ({ command, rowCount, rows }) => ({
        rows,
        numAffectedRows: CHANGES.has(command) ? BigInt(rowCount ?? 0) : undefined,
      }),
    );
    batch.statements.push({ text: sqlText, values, name: statementName(sqlText) });
    this.#sent.push(answer);
    answer.catch((error: unknown) => {
      if (!(error instanceof SkippedAfterFailure)) this.#failure ??= { error: asFenceFailure(error) };
    });
    return answer;
  }

  /** A new batch, sent once the event loop has run everything that was ready to run. */
  #gather(): { statements: BatchStatement[]; settled: BatchSettled[] } {
    const batch = { statements: [] as BatchStatement[], settled: [] as BatchSettled[] };
    setImmediate(() => {
      this.#gathering = undefined;
      submitBatch(this.#client, batch.statements, batch.settled);
    });
    return batch;
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
    const known = this.#failure;
    if (known) throw await this.rollback(known.error);
    const commit = this.send('commit');
    await Promise.allSettled(this.#sent);
    this.#ended = await commit.then(
      () => true,
      // Skipped behind a failed statement of its batch: the transaction is still open (aborted) on the
      // server, and a rollback ends it on a connection that stays good.
      (error: unknown) => (error instanceof SkippedAfterFailure ? this.#rolledBack() : false),
    );
    const failure = this.#failure as { error: unknown } | undefined; // set by the answers meanwhile
    if (failure) throw failure.error;
  }

  /** After `work` threw: undoes what was sent and says what went wrong first (the cause of any later failure). */
  async rollback(thrown: unknown): Promise<unknown> {
    await Promise.allSettled(this.#sent);
    this.#ended = await this.#rolledBack();
    return this.#failure?.error ?? thrown;
  }

  /** True once a `ROLLBACK` was answered. */
  #rolledBack(): Promise<boolean> {
    return this.#client.query('rollback').then(
      () => true,
      () => false,
    );
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
