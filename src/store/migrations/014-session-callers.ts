import type { Kysely, Migration } from 'kysely';

/**
 * Who a web session is for (issue #22): the phone the caller gave (the service desk then asks only
 * for the ZIP) and the person whose memory the session shares (a participant's id, or a key the
 * operator chose), set when the session starts; a message may later give the phone. A
 * participant's own conversation needs no row: the participant is who it is for.
 */
export function sessionCallersMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('session_callers')
        .addColumn('conversation_id', 'text', (c) => c.primaryKey().references('conversations.id').onDelete('cascade'))
        .addColumn('phone', 'text')
        .addColumn('person', 'text')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('session_callers_person').on('session_callers').columns(['person']).execute();
    },
  };
}
