import { sql, type CreateTableBuilder, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';

/**
 * The first schema. Written with Kysely's schema builder so both dialects run the same list; the
 * one dialect switch is the insertion-order column (`ordinal`): an identity column on PostgreSQL,
 * the autoincrement rowid on SQLite (which has no identity on non-key columns).
 */
export function initialMigration(dialect: SqlDialect): Migration {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the column names are not tracked here
  const withId = (table: CreateTableBuilder<string, never>): CreateTableBuilder<string, any> =>
    dialect === 'postgres'
      ? table
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('ordinal', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
      : table
          .addColumn('ordinal', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('id', 'text', (c) => c.notNull().unique());

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await withId(s.createTable('participants'))
        .addColumn('phone_number', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('gender', 'text')
        .addColumn('ethnicity', 'text')
        .addColumn('background', 'text')
        .addColumn('timezone', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('debug', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('enrolled_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('participants_phone_number_unique', ['phone_number'])
        .execute();
      await s.createIndex('participants_enrolled').on('participants').columns(['enrolled_at', 'ordinal']).execute();

      await s
        .createTable('conversations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('participant_id', 'text', (c) => c.references('participants.id').onDelete('cascade'))
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('flow', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('sub_state', 'text')
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await s
        .createIndex('conversations_participant')
        .on('conversations')
        .columns(['participant_id', 'created_at'])
        .execute();

      await s
        .createTable('messages')
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('poll', 'text')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('turn_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('messages_pk', ['conversation_id', 'seq'])
        .execute();

      await s
        .createTable('profiles')
        .addColumn('participant_id', 'text', (c) => c.primaryKey().references('participants.id').onDelete('cascade'))
        .addColumn('fields', 'text', (c) => c.notNull())
        .addColumn('intensity', 'text', (c) => c.notNull())
        .addColumn('success_count', 'integer', (c) => c.notNull())
        .addColumn('total_prompts', 'integer', (c) => c.notNull())
        .addColumn('tone', 'text', (c) => c.notNull())
        .addColumn('field_updated_at', 'text', (c) => c.notNull())
        .addColumn('last_habit_prompt', 'text')
        .addColumn('last_prompt_sent_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await withId(s.createTable('schedules'))
        .addColumn('participant_id', 'text', (c) => c.notNull().references('participants.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('fixed_time', 'text')
        .addColumn('window_start', 'text')
        .addColumn('window_end', 'text')
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('prep_minutes', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await s.createIndex('schedules_participant').on('schedules').columns(['participant_id', 'created_at']).execute();

      await withId(s.createTable('timers'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('participant_id', 'text', (c) => c.references('participants.id').onDelete('cascade'))
        .addColumn('dedup_key', 'text', (c) => c.notNull())
        .addColumn('due_at', 'bigint', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('lease_until', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // At most one pending timer per key; running, done, failed and cancelled ones never block it.
      await s
        .createIndex('timers_pending_dedup_key')
        .unique()
        .on('timers')
        .column('dedup_key')
        .where(sql.ref('status'), '=', sql.lit('pending'))
        .execute();
      await s.createIndex('timers_due').on('timers').columns(['status', 'due_at']).execute();
      await s.createIndex('timers_lease').on('timers').columns(['status', 'lease_until']).execute();
      await s.createIndex('timers_participant').on('timers').columns(['participant_id', 'status']).execute();
      await s.createIndex('timers_conversation').on('timers').column('conversation_id').execute();

      await withId(s.createTable('inbox'))
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('channel_message_id', 'text')
        .addColumn('sender', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('participant_id', 'text', (c) => c.references('participants.id').onDelete('cascade'))
        .addColumn('conversation_id', 'text', (c) => c.references('conversations.id').onDelete('cascade'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .addColumn('processed_at', 'bigint')
        // NULL channel message ids are distinct on both dialects: they never collide.
        .addUniqueConstraint('inbox_channel_message_unique', ['channel', 'channel_message_id'])
        .execute();
      await s.createIndex('inbox_pending').on('inbox').columns(['status', 'received_at', 'ordinal']).execute();
      await s.createIndex('inbox_participant').on('inbox').column('participant_id').execute();
      await s.createIndex('inbox_conversation').on('inbox').column('conversation_id').execute();

      await withId(s.createTable('outbox'))
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('participant_id', 'text', (c) => c.references('participants.id').onDelete('cascade'))
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('poll', 'text')
        .addColumn('idempotency_key', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('sent_at', 'bigint')
        .addUniqueConstraint('outbox_idempotency_key_unique', ['idempotency_key'])
        .execute();
      await s.createIndex('outbox_due').on('outbox').columns(['status', 'next_attempt_at', 'ordinal']).execute();
      await s.createIndex('outbox_conversation').on('outbox').columns(['conversation_id', 'ordinal']).execute();
      await s.createIndex('outbox_participant').on('outbox').column('participant_id').execute();

      await withId(s.createTable('turns'))
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('inbox_id', 'text')
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('module', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('model_calls', 'integer', (c) => c.notNull())
        .addColumn('tool_rounds', 'integer', (c) => c.notNull())
        .addColumn('model_ms', 'bigint', (c) => c.notNull())
        .addColumn('tool_ms', 'bigint', (c) => c.notNull())
        .addColumn('total_ms', 'bigint', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint', (c) => c.notNull())
        .execute();
      await s
        .createIndex('turns_conversation')
        .on('turns')
        .columns(['conversation_id', 'started_at', 'ordinal'])
        .execute();

      // No foreign key on turn_id: a turn's tool calls are written before the turn record.
      await withId(s.createTable('tool_calls'))
        .addColumn('turn_id', 'text', (c) => c.notNull())
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('round', 'integer', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('arguments', 'text', (c) => c.notNull())
        .addColumn('result', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('duration_ms', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await s
        .createIndex('tool_calls_conversation')
        .on('tool_calls')
        .columns(['conversation_id', 'created_at', 'round', 'ordinal'])
        .execute();

      await s
        .createTable('events')
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('turn_id', 'text')
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('events_pk', ['conversation_id', 'seq'])
        .execute();
    },
  };
}
