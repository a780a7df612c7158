import type { Kysely, Migration } from 'kysely';

/** Per-turn latency figures of the session stream (spec 004): first token and first status. */
export function turnLatencyMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('turns').addColumn('first_token_ms', 'bigint').execute();
      await db.schema.alterTable('turns').addColumn('time_to_status_ms', 'bigint').execute();
    },
  };
}
