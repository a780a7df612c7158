import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A conversation's pending outbox rows, without scanning everything it was ever sent: the turn's
 * commit asks whether any is pending before it hands its own rows straight to the dispatcher, and
 * the claim asks the same of every candidate (decision 009).
 */
export function pendingOutboxMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('outbox_pending_conversation')
        .on('outbox')
        .columns(['conversation_id', 'ordinal'])
        .where(sql.ref('status'), '=', 'pending')
        .execute();
    },
  };
}
