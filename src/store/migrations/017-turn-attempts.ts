import type { Kysely, Migration } from 'kysely';

/**
 * How many times a turn ran before its record (issue #20): 1 for most, more when it waited out a
 * model or database outage, so the console can mark a turn that was retried. Older turns read 1.
 */
export function turnAttemptsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('turns')
        .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(1))
        .execute();
    },
  };
}
