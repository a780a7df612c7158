import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';

/**
 * The assistant flow (decision 006): full-text search over the transcript (SQLite FTS5 kept by
 * triggers; a PostgreSQL GIN index on the English text-search vector) and a notes table.
 */
export function assistantMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('assistant_notes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('assistant_notes_conversation')
        .on('assistant_notes')
        .columns(['conversation_id', 'created_at'])
        .execute();
      if (dialect === 'postgres') {
        await sql`create index messages_text_search on messages using gin (to_tsvector('english', text))`.execute(db);
        return;
      }
      // Messages are append-only and leave only with their conversation, hence the delete trigger's table.
      await sql
        .raw(
          'create virtual table messages_fts using fts5(text, conversation_id unindexed, seq unindexed, ' +
            "tokenize = 'porter unicode61 remove_diacritics 2')",
        )
        .execute(db);
      await sql
        .raw(
          'insert into messages_fts (text, conversation_id, seq) ' +
            "select text, conversation_id, seq from messages where role in ('user', 'assistant')",
        )
        .execute(db);
      const insertRow = sql.raw(
        'insert into messages_fts (text, conversation_id, seq) values (new.text, new.conversation_id, new.seq)',
      );
      await sql`create trigger messages_fts_insert after insert on messages when new.role in ('user', 'assistant')
        begin ${insertRow}; end`.execute(db);
      await sql`create trigger messages_fts_delete after delete on conversations
        begin delete from messages_fts where conversation_id = old.id; end`.execute(db);
    },
  };
}
