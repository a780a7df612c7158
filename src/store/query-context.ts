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
  /**
   * SQLite: runs a prepared query's compiled SQL directly on the connection (decision 020), or
   * answers undefined when the statement must go through Kysely's driver after all.
   */
  readonly direct?: (sqlText: string, parameters: readonly unknown[]) => QueryResult<unknown> | undefined;
}
