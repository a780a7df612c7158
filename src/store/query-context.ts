import type { Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.ts';

export type SqlDialect = 'sqlite' | 'postgres';

/**
 * What every query function runs against: a Kysely handle (the store's own, or one bound to an
 * open transaction), the dialect for the few places that differ, and a way to make a group of
 * statements atomic.
 */
export interface QueryContext {
  readonly db: Kysely<Database>;
  readonly dialect: SqlDialect;
  /** True when `db` is bound to an open transaction. */
  readonly inTransaction: boolean;
  /** Runs `work` atomically: inside the current transaction when there is one, else in a new one. */
  atomic<T>(work: (ctx: QueryContext) => Promise<T>): Promise<T>;
  /** Runs a prepared query's compiled SQL without Kysely's driver, where the store offers a way. */
  readonly direct?: DirectQuery;
  /** PostgreSQL, in a transaction: the conversations whose row it has locked (`lockConversation`). */
  readonly locked?: Set<string>;
}

/**
 * A prepared query's compiled SQL run directly (decision 020): on SQLite's connection (the answer
 * at once, or undefined when it must go through Kysely's driver after all), or on a PostgreSQL
 * transaction's pipelined connection. `deferred`: the caller does not need the answer, and a
 * pipelined transaction resolves it once sent (the transaction still fails if it fails).
 */
export type DirectQuery = (
  sqlText: string,
  parameters: readonly unknown[],
  deferred?: boolean,
) => QueryResult<unknown> | Promise<QueryResult<unknown>> | undefined;

/** A transaction's work: its Kysely, and a direct way for prepared queries where the runner has one. */
export type TransactionWork<T> = (trx: Kysely<Database>, direct?: DirectQuery) => Promise<T>;

/** How a store runs transactions: SQLite's group commit, PostgreSQL's pipelined connection. */
export type TransactionRunner = <T>(work: TransactionWork<T>, options?: { gather?: boolean }) => Promise<T>;
