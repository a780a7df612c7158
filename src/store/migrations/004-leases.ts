import type { Kysely, Migration } from 'kysely';

/** Scale-out (decision 004): one lease row per conversation being worked on. */
export function leasesMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('conversation_leases')
        .addColumn('conversation_id', 'text', (c) => c.primaryKey().references('conversations.id').onDelete('cascade'))
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('lease_until', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('inbox_conversation_pending')
        .on('inbox')
        .columns(['conversation_id', 'status', 'ordinal'])
        .execute();
    },
  };
}
