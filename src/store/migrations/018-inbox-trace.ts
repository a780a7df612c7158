import type { Kysely, Migration } from 'kysely';

/**
 * The W3C `traceparent` of the request that brought an inbox item (tracing on; issue #20,
 * decision 021): the turn that answers it continues that trace in whichever process runs it, and
 * after a restart. Null when tracing is off.
 */
export function inboxTraceMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('inbox').addColumn('trace_parent', 'text').execute();
    },
  };
}
