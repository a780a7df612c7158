import { sql, type Kysely, type QueryResult } from 'kysely';
import { sqliteGroupCommit, type TransactionRunner } from './sqlite-group-commit.ts';
import type { Store, StoreExtension, StoreOperations, StoreTx, TransactionOptions } from './store.ts';
import type { QueryContext, SqlDialect } from './query-context.ts';
import type { Database } from './schema.ts';
import { participantQueries } from './participants-queries.ts';
import { conversationQueries } from './conversations-queries.ts';
import { messageQueries } from './messages-queries.ts';
import { profileQueries } from './profiles-queries.ts';
import { scheduleQueries } from './schedules-queries.ts';
import { timerQueries } from './timers-queries.ts';
import { inboxQueries } from './inbox-queries.ts';
import { outboxQueries } from './outbox-queries.ts';
import { turnQueries } from './turns-queries.ts';
import { eventQueries } from './events-queries.ts';
import { contactQueries } from './contacts-queries.ts';
import { leaseQueries } from './leases-queries.ts';
import { searchQueries } from './search-queries.ts';
import { virtualClockQueries } from './virtual-clock-queries.ts';
import { backlogQueries } from './backlog-queries.ts';
import { contextQueries } from './context-queries.ts';

/** Every operation of the port, bound to one query context (the store's pool, or a transaction). */
export function storeOperations(ctx: QueryContext): StoreOperations {
  return {
    ...participantQueries(ctx),
    ...conversationQueries(ctx),
    ...messageQueries(ctx),
    ...profileQueries(ctx),
    ...scheduleQueries(ctx),
    ...timerQueries(ctx),
    ...inboxQueries(ctx),
    ...outboxQueries(ctx),
    ...turnQueries(ctx),
    ...eventQueries(ctx),
    ...contactQueries(ctx),
    ...leaseQueries(ctx),
    ...searchQueries(ctx),
    ...virtualClockQueries(ctx),
    ...backlogQueries(ctx),
    ...contextQueries(ctx),
  };
}

function postgresTransactions(db: Kysely<Database>): TransactionRunner {
  return (work) => db.transaction().execute(work);
}

/** SQLite's direct way for prepared queries (`QueryContext.direct`), in a transaction or not. */
export type DirectRunner = (
  sqlText: string,
  parameters: readonly unknown[],
  inTransaction: boolean,
) => QueryResult<unknown> | undefined;

/** The `Store` over a Kysely instance of either dialect. `destroy` releases the driver. */
export function createKyselyStore(
  db: Kysely<Database>,
  dialect: SqlDialect,
  destroy: () => Promise<void>,
  direct?: DirectRunner,
): Store {
  const runTransaction = dialect === 'sqlite' ? sqliteGroupCommit(db) : postgresTransactions(db);
  const inTransaction =
    direct && ((sqlText: string, parameters: readonly unknown[]) => direct(sqlText, parameters, true));

  const transactionContext = (trx: Kysely<Database>): QueryContext => {
    const ctx: QueryContext = {
      db: trx,
      dialect,
      inTransaction: true,
      atomic: (work) => work(ctx),
      ...(inTransaction ? { direct: inTransaction } : {}),
    };
    return ctx;
  };
  const rootContext: QueryContext = {
    db,
    dialect,
    inTransaction: false,
    atomic: (work) => runTransaction((trx) => work(transactionContext(trx))),
    ...(direct ? { direct: (sqlText, parameters) => direct(sqlText, parameters, false) } : {}),
  };

  let closing: Promise<void> | undefined;
  const rootOperations = storeOperations(rootContext);
  return {
    ...rootOperations,
    dialect,
    transaction<T>(work: (tx: StoreTx) => Promise<T>, options?: TransactionOptions): Promise<T> {
      return runTransaction((trx) => work(storeOperations(transactionContext(trx))), options);
    },
    batched<T>(work: (ops: StoreOperations) => Promise<T>, options?: TransactionOptions): Promise<T> {
      if (dialect === 'postgres' || !options?.gather) return work(rootOperations);
      return runTransaction((trx) => work(storeOperations(transactionContext(trx))), options);
    },
    extend<E>(queries: (ctx: QueryContext) => E): StoreExtension<E> {
      return {
        ops: queries(rootContext),
        transaction: (work) =>
          runTransaction((trx) => {
            const ctx = transactionContext(trx);
            return work(storeOperations(ctx), queries(ctx));
          }),
      };
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async databaseNow() {
      if (dialect === 'sqlite') return new Date();
      const { rows } = await sql<{
        now: number;
      }>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as now`.execute(db);
      return new Date(Math.round(Number(rows[0]!.now)));
    },
    close() {
      closing ??= destroy();
      return closing;
    },
  };
}
