import { sql, type Kysely, type QueryResult } from 'kysely';
import { sqliteGroupCommit } from './sqlite-group-commit.ts';
import type { Store, StoreExtension, StoreOperations, StoreTx, TransactionOptions } from './store.ts';
import type { DirectQuery, QueryContext, SqlDialect, TransactionRunner } from './query-context.ts';
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

/** The port's operations, by the module that implements them (each a factory over a query context). */
const MODULES = [
  participantQueries,
  conversationQueries,
  messageQueries,
  profileQueries,
  scheduleQueries,
  timerQueries,
  inboxQueries,
  outboxQueries,
  turnQueries,
  eventQueries,
  contactQueries,
  leaseQueries,
  searchQueries,
  virtualClockQueries,
  backlogQueries,
  contextQueries,
] as const;

/** Every operation of the port, bound to one query context (the store's pool, or a transaction). */
export function storeOperations(ctx: QueryContext): StoreOperations {
  return Object.assign({}, ...MODULES.map((module) => module(ctx))) as StoreOperations;
}

const CONTEXT = Symbol('context');
const BUILT = Symbol('built');

/**
 * A transaction's operations: a module's are built when one of them is first used, as a unit of
 * work uses a handful of the port's hundred (building them all took a tenth of what a turn
 * allocated). Read through the prototype chain, so an object made with this one as its prototype
 * (a flow adding its own queries) serves them too.
 */
class TransactionOperations {
  readonly [CONTEXT]: QueryContext;
  readonly [BUILT]: object[] = [];

  constructor(ctx: QueryContext) {
    this[CONTEXT] = ctx;
  }
}
let operationsDefined = false;

function transactionOperations(ctx: QueryContext): StoreOperations {
  if (!operationsDefined) {
    // Which module answers which name, read once from modules built on this first context.
    MODULES.forEach((module, index) => {
      for (const name of Object.keys(module(ctx)))
        Object.defineProperty(TransactionOperations.prototype, name, {
          get(this: TransactionOperations) {
            return ((this[BUILT][index] ??= module(this[CONTEXT])) as Record<string, unknown>)[name];
          },
        });
    });
    operationsDefined = true;
  }
  return new TransactionOperations(ctx) as unknown as StoreOperations;
}

/** SQLite's direct way for prepared queries (`QueryContext.direct`), in a transaction or not. */
export type DirectRunner = (
  sqlText: string,
  parameters: readonly unknown[],
  inTransaction: boolean,
) => QueryResult<unknown> | undefined;

export interface KyselyStoreOptions {
  /** SQLite: prepared queries straight on the connection. */
  direct?: DirectRunner;
  /** How transactions run (default: SQLite group commit; PostgreSQL needs its pipelined runner). */
  transactions?: TransactionRunner;
}

/** The `Store` over a Kysely instance of either dialect. `destroy` releases the driver. */
export function createKyselyStore(
  db: Kysely<Database>,
  dialect: SqlDialect,
  destroy: () => Promise<void>,
  options: KyselyStoreOptions = {},
): Store {
  const { direct } = options;
  const runTransaction = options.transactions ?? sqliteGroupCommit(db, direct);
  const inTransaction: DirectQuery | undefined = direct && ((sqlText, parameters) => direct(sqlText, parameters, true));

  const transactionContext = (trx: Kysely<Database>, pipelined?: DirectQuery): QueryContext => {
    const ctx: QueryContext = {
      db: trx,
      dialect,
      inTransaction: true,
      atomic: (work) => work(ctx),
      ...((pipelined ?? inTransaction) ? { direct: pipelined ?? inTransaction } : {}),
      ...(dialect === 'postgres' ? { locked: new Set<string>() } : {}),
    };
    return ctx;
  };
  const rootContext: QueryContext = {
    db,
    dialect,
    inTransaction: false,
    atomic: (work) => runTransaction((trx, pipelined) => work(transactionContext(trx, pipelined))),
    ...(direct ? { direct: (sqlText, parameters) => direct(sqlText, parameters, false) } : {}),
  };

  let closing: Promise<void> | undefined;
  const rootOperations = storeOperations(rootContext);
  return {
    ...rootOperations,
    dialect,
    transaction<T>(work: (tx: StoreTx) => Promise<T>, options?: TransactionOptions): Promise<T> {
      return runTransaction(
        (trx, pipelined) => work(transactionOperations(transactionContext(trx, pipelined))),
        options,
      );
    },
    batched<T>(work: (ops: StoreOperations) => Promise<T>, options?: TransactionOptions): Promise<T> {
      if (dialect === 'postgres' || !options?.gather) return work(rootOperations);
      return runTransaction(
        (trx, pipelined) => work(transactionOperations(transactionContext(trx, pipelined))),
        options,
      );
    },
    extend<E>(queries: (ctx: QueryContext) => E): StoreExtension<E> {
      return {
        ops: queries(rootContext),
        transaction: (work) =>
          runTransaction((trx, pipelined) => {
            const ctx = transactionContext(trx, pipelined);
            return work(transactionOperations(ctx), queries(ctx));
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
