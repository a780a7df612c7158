import { sql, type Selectable } from 'kysely';
import { z } from 'zod';
import type { StoredEvent } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { EventsTable } from './schema.ts';
import { fromMs, parseJson, toMs } from './codec.ts';
import { prepared, preparedInsert } from './prepared.ts';

type EventOperations = Pick<
  StoreOperations,
  'appendEvents' | 'listEvents' | 'eventRange' | 'pruneEvents' | 'followEvents' | 'unfollowEvents' | 'followedElsewhere'
>;

const payloadSchema = z.record(z.string(), z.unknown());

const insertEventRows = preparedInsert('events');

// A conversation's first turn in a process reads its log's head (`EventHub`): compiled once.
const rangeOf = prepared((db, a: { conversationId: string }) =>
  db
    .selectFrom('events')
    .select((eb) => [eb.fn.min('seq').as('first'), eb.fn.max('seq').as('last')])
    .where('conversation_id', '=', a.conversationId),
);
const lastWithTurn = prepared((db, a: { conversationId: string }) =>
  db
    .selectFrom('events')
    .select('turn_id')
    .where('conversation_id', '=', a.conversationId)
    .where('turn_id', 'is not', null)
    .orderBy('seq', 'desc')
    .limit(1),
);
const lastFinalOf = prepared((db, a: { conversationId: string }) =>
  db
    .selectFrom('events')
    .select('data')
    .where('conversation_id', '=', a.conversationId)
    .where('type', '=', 'final')
    .orderBy('seq', 'desc')
    .limit(1),
);

// Asked in every turn commit on PostgreSQL (after the conversation's row lock): compiled once.
const followerElsewhere = prepared((db, a: { conversationId: string; owner: string; now: number }) =>
  db
    .selectFrom('event_followers')
    .select('owner')
    .where('conversation_id', '=', a.conversationId)
    .where('owner', '<>', a.owner)
    .where('until', '>', a.now)
    .limit(1),
);

/** The followers' upsert: PostgreSQL locks each conversation's row first (see `followEvents`). */
function followSql(dialect: QueryContext['dialect'], ids: readonly string[], owner: string, until: number) {
  return dialect === 'postgres'
    ? sql`with locked as (select id from conversations where id = any(${[...ids]}::text[]) for share)
        insert into event_followers (conversation_id, owner, "until") select id, ${owner}, ${until} from locked
        on conflict (conversation_id, owner) do update set "until" = excluded."until"`
    : sql`insert into event_followers (conversation_id, owner, "until")
        select id, ${owner}, ${until} from conversations
        where id in (select value from json_each(${JSON.stringify(ids)}))
        on conflict (conversation_id, owner) do update set "until" = excluded."until"`;
}

export function eventQueries(ctx: QueryContext): EventOperations {
  const { db } = ctx;
  return {
    async appendEvents(events) {
      if (events.length === 0) return;
      await insertEventRows(
        ctx,
        events.map((event) => ({
          conversation_id: event.conversationId,
          seq: event.seq,
          turn_id: event.turnNo === null ? null : String(event.turnNo),
          type: event.type,
          data: JSON.stringify(event.payload),
          at: toMs(event.at),
        })),
      );
    },

    async followEvents(conversationIds, owner, until) {
      if (conversationIds.length === 0) return;
      await followSql(ctx.dialect, conversationIds, owner, toMs(until)).execute(db);
    },

    async unfollowEvents(conversationId, owner) {
      await db
        .deleteFrom('event_followers')
        .where('conversation_id', '=', conversationId)
        .where('owner', '=', owner)
        .execute();
    },

    async followedElsewhere(conversationId, owner, now) {
      return (await followerElsewhere.rows(ctx, { conversationId, owner, now: toMs(now) })).length > 0;
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
      const range = await rangeOf.first(ctx, { conversationId });
      if (!range || range.last === null || range.first === null) return undefined;
      const withTurn = await lastWithTurn.first(ctx, { conversationId });
      const lastFinal = await lastFinalOf.first(ctx, { conversationId });
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
