import type { Kysely, Migration } from 'kysely';

/**
 * A participant's pending timers in due order straight from one index. With `timers_participant`
 * on (participant_id, status) alone, SQLite preferred `timers_due` (status, due_at) for "this
 * participant's pending timers by due time", because it gives the order without a sort: it read
 * every pending timer of the study to find the participant's few, in every habit-coach turn's
 * context read (decision 020: 256 µs a read with 4,000 pending timers, growing with the study).
 * With `due_at` in the participant index the same read is a search of the participant's own rows.
 */
export function timersByParticipantMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('timers_participant').execute();
      await db.schema
        .createIndex('timers_participant')
        .on('timers')
        .columns(['participant_id', 'status', 'due_at'])
        .execute();
    },
  };
}
