import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';

/**
 * Inbound message ids are deduplicated per sender: `(channel, sender, channel_message_id)`
 * instead of `(channel, channel_message_id)`, so one HTTP client's `"m1"` no longer swallows
 * another's (decision 008). Provider ids (WhatsApp, Twilio) are unique on their own and always
 * come with the same sender, so they dedupe as before. Also keeps the virtual clock's time, so a
 * restarted server with `CLOCK=virtual` resumes where it was.
 *
 * SQLite cannot drop a table constraint: the inbox is rebuilt (nothing references it) with the same
 * rows, ordinals and indexes.
 */
export function senderDedupMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`alter table inbox drop constraint inbox_channel_message_unique`.execute(db);
        await sql
          .raw(
            'alter table inbox add constraint inbox_sender_message_unique unique (channel, sender, channel_message_id)',
          )
          .execute(db);
      } else {
        await rebuildSqliteInbox(db);
      }
      await db.schema
        .createTable('virtual_clock')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}

const INBOX_COLUMNS = sql.raw(
  'ordinal, id, channel, channel_message_id, sender, text, participant_id, conversation_id, status, error, ' +
    'received_at, processed_at',
);

async function rebuildSqliteInbox(db: Kysely<unknown>): Promise<void> {
  await sql`create table inbox_008 (
    ordinal integer primary key autoincrement,
    id text not null unique,
    channel text not null,
    channel_message_id text,
    sender text not null,
    text text not null,
    participant_id text references participants (id) on delete cascade,
    conversation_id text references conversations (id) on delete cascade,
    status text not null,
    error text,
    received_at bigint not null,
    processed_at bigint,
    constraint inbox_sender_message_unique unique (channel, sender, channel_message_id)
  )`.execute(db);
  await sql`insert into inbox_008 (${INBOX_COLUMNS}) select ${INBOX_COLUMNS} from inbox order by ordinal`.execute(db);
  await sql`drop table inbox`.execute(db);
  await sql`alter table inbox_008 rename to inbox`.execute(db);
  const s = db.schema;
  await s.createIndex('inbox_pending').on('inbox').columns(['status', 'received_at', 'ordinal']).execute();
  await s.createIndex('inbox_participant').on('inbox').column('participant_id').execute();
  await s.createIndex('inbox_conversation').on('inbox').column('conversation_id').execute();
  await s
    .createIndex('inbox_conversation_pending')
    .on('inbox')
    .columns(['conversation_id', 'status', 'ordinal'])
    .execute();
  await s.createIndex('inbox_sender').on('inbox').columns(['channel', 'sender', 'received_at']).execute();
}
