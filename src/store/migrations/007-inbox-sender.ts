import type { Kysely, Migration } from 'kysely';

/** Messages by sender, for the once-a-day answer to someone not enrolled (decision 003). */
export function inboxSenderMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('inbox_sender').on('inbox').columns(['channel', 'sender', 'received_at']).execute();
    },
  };
}
