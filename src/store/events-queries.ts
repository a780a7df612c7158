import { sql, type Selectable } from 'kysely';
import { z } from 'zod';
import type { StoredEvent } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { EventsTable } from './schema.ts';
import { fromMs, parseJson, toMs } from './codec.ts';
import { prepared, preparedInsert } from './prepared.ts';

type EventOperations = Pick<StoreOperations, 'appendEvents' | 'listEvents' | 'eventRange' | 'pruneEvents'>;

const payloadSchema = z.record(z.string(), z.unknown());

const insertEventRows = preparedInsert('events');
/**
 * PostgreSQL: the events, and a notification per conversation on `channel` (delivered when the
 * transaction commits, with the events), in one statement for any number of rows.
 */
const insertAndAnnounce = prepared(
  (
    db,
    a: {
      conversations: string[];
      seqs: number[];
      turns: (string | null)[];
      types: string[];
      data: string[];
      at: number[];
      channel: string;
    },
  ) => ({
    compile: () =>
      sql`with inserted as (
          insert into events (conversation_id, seq, turn_id, type, data, at)
          select * from unnest(${a.conversations}::text[], ${a.seqs}::int[], ${a.turns}::text[], ${a.types}::text[],
                               ${a.data}::text[], ${a.at}::bigint[]))
        select pg_notify(${a.channel}, conversation)
          from (select distinct unnest(${a.conversations}::text[]) as conversation) c`.compile(db),
  }),
);

export function eventQueries(ctx: QueryContext): EventOperations {
  const { db } = ctx;
  return {
    async appendEvents(events) {
      if (events.length === 0) return;
      const rows = events.map((event) => ({
        conversation_id: event.conversationId,
        seq: event.seq,
        turn_id: event.turnNo === null ? null : String(event.turnNo),
        type: event.type,
        data: JSON.stringify(event.payload),
        at: toMs(event.at),
      }));
      if (!ctx.eventChannel) return insertEventRows(ctx, rows);
      await insertAndAnnounce.write(ctx, {
        conversations: rows.map((row) => row.conversation_id),
        seqs: rows.map((row) => row.seq),
        turns: rows.map((row) => row.turn_id),
        types: rows.map((row) => row.type),
        data: rows.map((row) => row.data),
        at: rows.map((row) => row.at),
        channel: ctx.eventChannel,
      });
    },

    async listEvents(conversationId, options = {}) {
      let query = db
        .selectFrom('events')
        .selectAll()
        .where('conversation_id', '=', conversationId)
        .where('seq', '>', options.afterSeq ?? 0)
        .orderBy('seq', 'asc');
      if (options.limit !== undefined) query = query.limit(Math.max(0, options.limit));
      return (await query.execute()).map(toEvent);
    },

    async eventRange(conversationId) {
      const range = await db
        .selectFrom('events')
        .select((eb) => [eb.fn.min('seq').as('first'), eb.fn.max('seq').as('last')])
        .where('conversation_id', '=', conversationId)
        .executeTakeFirst();
      if (!range || range.last === null || range.first === null) return undefined;
      const withTurn = await db
        .selectFrom('events')
        .select('turn_id')
        .where('conversation_id', '=', conversationId)
        .where('turn_id', 'is not', null)
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      const lastFinal = await db
        .selectFrom('events')
        .select('data')
        .where('conversation_id', '=', conversationId)
        .where('type', '=', 'final')
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      const messageSeq =
        lastFinal &&
        (parseJson(payloadSchema, lastFinal.data, 'event payload').data as { messageSeq?: unknown } | undefined)
          ?.messageSeq;
      return {
        first: Number(range.first),
        last: Number(range.last),
        lastTurnNo: withTurn?.turn_id ? Number(withTurn.turn_id) : null,
        lastMessageSeq: typeof messageSeq === 'number' ? messageSeq : null,
      };
    },

    async pruneEvents(conversationId, beforeSeq) {
      const result = await db
        .deleteFrom('events')
        .where('conversation_id', '=', conversationId)
        .where('seq', '<', beforeSeq)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function toEvent(row: Selectable<EventsTable>): StoredEvent {
  return {
    conversationId: row.conversation_id,
    seq: Number(row.seq),
    turnNo: row.turn_id === null ? null : Number(row.turn_id),
    type: row.type,
    payload: parseJson(payloadSchema, row.data, 'event payload'),
    at: fromMs(row.at),
  };
}
