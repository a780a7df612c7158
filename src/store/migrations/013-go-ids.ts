import type { Kysely, Migration } from 'kysely';

/**
 * Which Go PromptPipe participant (`p_…`) each imported participant was (issue #23): the importer
 * recognises them on a second run, and the study export shows the Go id. A participant deleted
 * here keeps their row with no participant, so running the import again does not bring them back.
 */
export function goIdsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('go_participants')
        .addColumn('go_id', 'text', (c) => c.primaryKey())
        .addColumn('participant_id', 'text', (c) => c.unique().references('participants.id').onDelete('set null'))
        .addColumn('imported_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
