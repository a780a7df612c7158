import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';

/**
 * The write path, step two (decision 020): fewer index pages written per turn.
 * - Indexes that serve "what is pending" hold only pending rows: a row leaves them once when it
 *   is done instead of moving inside them, and they stay small. Queries name the status as a
 *   literal so the planner uses them (`PlanLiteralsPlugin`). One such index serves the inbox.
 * - Senders are found by time only when not enrolled (the once-a-day answer).
 * - The provider-message index holds only rows that have a provider id (most never do).
 * - The conversation-by-participant lookup is served in index order (no sort).
 * - Only conversations whose flow searches its transcript feed the full-text index
 *   (`conversations.transcript_search`, set from the flow at creation; 1 for existing ones).
 */
export function writePathMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      const pending = sql`status = 'pending'`;
      // The sweep's "every pending item" reads the small pending index below and sorts.
      await s.dropIndex('inbox_pending').execute();
      await s.dropIndex('inbox_conversation_pending').execute();
      await sql`create index inbox_conversation_pending on inbox (conversation_id, ordinal) where ${pending}`.execute(
        db,
      );
      // Senders are looked up by time only when nobody is enrolled under them (once a day each).
      await s.dropIndex('inbox_sender').execute();
      await sql`create index inbox_sender on inbox (channel, sender, received_at) where participant_id is null`.execute(
        db,
      );
      await s.dropIndex('outbox_due').execute();
      await sql`create index outbox_due on outbox (next_attempt_at, ordinal) where ${pending}`.execute(db);
      await s.dropIndex('outbox_provider_message').execute();
      await sql`create index outbox_provider_message on outbox (channel, provider_message_id)
        where provider_message_id is not null`.execute(db);
      await s.dropIndex('conversations_participant').execute();
      await s
        .createIndex('conversations_participant')
        .on('conversations')
        .columns(['participant_id', 'created_at', 'id'])
        .execute();
      await s
        .alterTable('conversations')
        .addColumn('transcript_search', dialect === 'postgres' ? 'boolean' : 'integer', (c) =>
          c.notNull().defaultTo(dialect === 'postgres' ? sql`true` : 1),
        )
        .execute();
      if (dialect === 'postgres') return; // its text-search index covers every message (decision 006)
      await sql`drop trigger messages_fts_insert`.execute(db);
      const insertRow = sql.raw(
        'insert into messages_fts (text, conversation_id, seq) values (new.text, new.conversation_id, new.seq)',
      );
      await sql`create trigger messages_fts_insert after insert on messages
        when new.role in ('user', 'assistant')
          and (select transcript_search from conversations where id = new.conversation_id)
        begin ${insertRow}; end`.execute(db);
    },
  };
}
