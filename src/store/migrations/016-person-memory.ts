import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The assistant's memory belongs to the person (issue #22, decision 006): a note carries the
 * person it is for (`p_…` a participant, `id:…`/`tel:…` a web session's person; null for a
 * session nobody is known for), existing notes of a participant's conversation become theirs;
 * and message embeddings for semantic recall (one row per message and model, the vector as
 * base64 little-endian float32), found by brute force among the person's messages.
 */
export function personMemoryMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('assistant_notes').addColumn('person', 'text').execute();
      await sql
        .raw(
          'update assistant_notes set person = ' +
            '(select participant_id from conversations c where c.id = assistant_notes.conversation_id)',
        )
        .execute(db);
      await db.schema
        .createIndex('assistant_notes_person')
        .on('assistant_notes')
        .columns(['person', 'created_at'])
        .execute();
      await db.schema
        .createTable('message_embeddings')
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('vector', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('message_embeddings_pk', ['conversation_id', 'model', 'seq'])
        .execute();
    },
  };
}
