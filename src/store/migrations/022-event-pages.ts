import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';

/**
 * A conversation's session events in pages (decision 020): one row per write of consecutive
 * events, their seqs `first_seq`..`last_seq`, the events a JSON array in seq order. A turn wrote
 * ten rows (statuses, tokens, the final, speaking) and now writes one. `turn_no` is the turn of the
 * page's last event that has one and `last_message_seq` the transcript seq of its last `final`,
 * so a process that loads the log's head reads them from one page each, as it did from one row.
 * The existing events become pages of one event each.
 */
export function eventPagesMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('event_pages')
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
        .addColumn('first_seq', 'integer', (c) => c.notNull())
        .addColumn('last_seq', 'integer', (c) => c.notNull())
        .addColumn('turn_no', 'integer')
        .addColumn('last_message_seq', 'integer')
        .addColumn('events', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('event_pages_pk', ['conversation_id', 'first_seq'])
        .execute();
      await (dialect === 'postgres' ? copyPostgres : copySqlite).execute(db);
      await db.schema.dropTable('events').execute();
    },
  };
}

const COLUMNS = sql.raw('conversation_id, first_seq, last_seq, turn_no, last_message_seq, events');

const copySqlite = sql`insert into event_pages (${COLUMNS})
  select conversation_id, seq, seq, cast(turn_id as integer),
    case when type = 'final' and json_type(data, '$.data.messageSeq') in ('integer', 'real')
      then cast(json_extract(data, '$.data.messageSeq') as integer) end,
    json_array(json_object('type', type, 'turn', cast(turn_id as integer), 'at', at, 'payload', json(data)))
  from events`;

const copyPostgres = sql`insert into event_pages (${COLUMNS})
  select conversation_id, seq, seq, turn_id::integer,
    case when type = 'final' and jsonb_typeof(data::jsonb #> '{data,messageSeq}') = 'number'
      then (data::jsonb #>> '{data,messageSeq}')::numeric::integer end,
    json_build_array(json_build_object('type', type, 'turn', turn_id::integer, 'at', at, 'payload', data::json))::text
  from events`;
