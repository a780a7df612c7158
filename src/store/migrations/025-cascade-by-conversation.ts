import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';

/**
 * Inbox and outbox rows go with their conversation, not also with their participant (decision 020).
 * Both had a foreign key to `participants` that cascaded, and an index on `participant_id` that
 * only the cascade read: every acknowledged message and every reply wrote a b-tree for it. A
 * participant's conversations already cascade to their rows. What is left of the participant's
 * own cascade is the inbox rows of theirs outside any conversation (a message from a participant
 * who has none), which `deleteParticipant` deletes itself through a small partial index that a
 * conversation's rows never enter. Every outbox row has a conversation.
 *
 * SQLite cannot drop a foreign key: both tables are rebuilt (nothing references them) with the
 * same rows, ordinals, AUTOINCREMENT counters and other indexes.
 */
export function cascadeByConversationMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') await dropPostgresParticipantKeys(db);
      else {
        await rebuildSqlite(db, 'inbox', INBOX);
        await rebuildSqlite(db, 'outbox', OUTBOX);
      }
      await sql`create index inbox_participant_no_conversation on inbox (participant_id)
        where conversation_id is null`.execute(db);
    },
  };
}

async function dropPostgresParticipantKeys(db: Kysely<unknown>): Promise<void> {
  // Named by PostgreSQL when the tables were made; read rather than assumed.
  const { rows } = await sql<{ table: string; name: string }>`select conrelid::regclass::text as table, conname as name
    from pg_constraint
    where contype = 'f' and confrelid = 'participants'::regclass
      and conrelid in ('inbox'::regclass, 'outbox'::regclass)`.execute(db);
  for (const { table, name } of rows)
    await sql`alter table ${sql.raw(table)} drop constraint ${sql.id(name)}`.execute(db);
  await sql`drop index inbox_participant`.execute(db);
  await sql`drop index outbox_participant`.execute(db);
}

interface Rebuilt {
  /** The table's columns and constraints as version 024 made them, without the participant key. */
  definition: string;
  columns: string;
  /** Its indexes but the participant one, as version 024 made them. */
  indexes: string[];
}

const INBOX: Rebuilt = {
  definition: `ordinal integer primary key autoincrement,
    id text not null unique,
    channel text not null,
    channel_message_id text,
    sender text not null,
    text text not null,
    participant_id text,
    conversation_id text references conversations (id) on delete cascade,
    status text not null,
    error text,
    received_at bigint not null,
    processed_at bigint,
    trace_parent text,
    constraint inbox_sender_message_unique unique (channel, sender, channel_message_id)`,
  columns:
    'ordinal, id, channel, channel_message_id, sender, text, participant_id, conversation_id, status, error, ' +
    'received_at, processed_at, trace_parent',
  indexes: [
    'create index inbox_conversation on inbox (conversation_id)',
    `create index inbox_conversation_pending on inbox (conversation_id, ordinal) where status = 'pending'`,
    'create index inbox_sender on inbox (channel, sender, received_at) where participant_id is null',
  ],
};

const OUTBOX: Rebuilt = {
  definition: `ordinal integer primary key autoincrement,
    id text not null unique,
    conversation_id text not null references conversations (id) on delete cascade,
    participant_id text,
    channel text not null,
    recipient text not null,
    kind text not null,
    text text not null,
    poll text,
    idempotency_key text not null,
    status text not null,
    attempts integer not null,
    next_attempt_at bigint not null,
    last_error text,
    created_at bigint not null,
    sent_at bigint,
    provider_message_id text,
    delivery_status text,
    delivery_status_at bigint,
    delivery_error text,
    constraint outbox_idempotency_key_unique unique (idempotency_key)`,
  columns:
    'ordinal, id, conversation_id, participant_id, channel, recipient, kind, text, poll, idempotency_key, status, ' +
    'attempts, next_attempt_at, last_error, created_at, sent_at, provider_message_id, delivery_status, ' +
    'delivery_status_at, delivery_error',
  indexes: [
    'create index outbox_conversation on outbox (conversation_id, ordinal)',
    `create index outbox_pending_conversation on outbox (conversation_id, ordinal) where status = 'pending'`,
    `create index outbox_due on outbox (next_attempt_at, ordinal) where status = 'pending'`,
    `create index outbox_provider_message on outbox (channel, provider_message_id)
      where provider_message_id is not null`,
  ],
};

async function rebuildSqlite(db: Kysely<unknown>, table: string, rebuilt: Rebuilt): Promise<void> {
  const name = sql.raw(table);
  const next = sql.raw(`${table}_025`);
  // Its AUTOINCREMENT counter: an ordinal once given is never given again, deleted rows' included.
  const { rows } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(db);
  await sql`create table ${next} (${sql.raw(rebuilt.definition)})`.execute(db);
  const columns = sql.raw(rebuilt.columns);
  await sql`insert into ${next} (${columns}) select ${columns} from ${name} order by ordinal`.execute(db);
  await sql`drop table ${name}`.execute(db);
  await sql`alter table ${next} rename to ${name}`.execute(db);
  for (const index of rebuilt.indexes) await sql.raw(index).execute(db);
  const seq = rows[0]?.seq;
  if (seq === undefined) return;
  await sql`delete from sqlite_sequence where name = ${table}`.execute(db);
  await sql`insert into sqlite_sequence (name, seq) values (${table}, ${seq})`.execute(db);
}
