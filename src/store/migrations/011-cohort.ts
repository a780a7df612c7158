import type { Kysely, Migration } from 'kysely';

/** A participant's cohort (an arm, a site): free text, set at enrolment or later, a filter everywhere. */
export function cohortMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('participants').addColumn('cohort', 'text').execute();
      await db.schema.createIndex('participants_cohort').on('participants').column('cohort').execute();
    },
  };
}
