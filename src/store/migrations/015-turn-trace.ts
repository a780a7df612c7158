import type { Kysely, Migration } from 'kysely';

/**
 * The OpenTelemetry trace a turn ran in (issue #20, decision 021): an operator goes from a turn
 * in `GET …/turns` to its spans in the tracing backend. Null when tracing is off.
 */
export function turnTraceMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('turns').addColumn('trace_id', 'text').execute();
    },
  };
}
