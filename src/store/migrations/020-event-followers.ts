import type { Kysely, Migration } from 'kysely';

/**
 * Who follows a conversation's session events, by process (decision 020, "notifications only
 * for followers"): a writer on PostgreSQL sends the fan-out notification only when another
 * process follows the conversation. A row lapses at `until` (ms) unless its process renews it.
 */
export function eventFollowersMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('event_followers')
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('until', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('event_followers_pk', ['conversation_id', 'owner'])
        .execute();
    },
  };
}
