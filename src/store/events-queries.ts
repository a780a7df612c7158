import { sql, type Selectable } from 'kysely';
import type { StoredEvent } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { EventPagesTable } from './schema.ts';
import { fromMs, toMs } from './codec.ts';
import { decodePage, encodePage } from './event-page-codec.ts';
import { lockConversation } from './conversation-lock.ts';
import { prepared } from './prepared.ts';

type EventOperations = Pick<
  StoreOperations,
  'appendEvents' | 'listEvents' | 'eventRange' | 'pruneEvents' | 'followEvents' | 'unfollowEvents' | 'followedElsewhere'
>;

/** Events one page holds at most: a longer run is written as several pages. */
const PAGE_EVENTS = 256;
/** No limit, as a number both dialects take. */
const ALL = Number.MAX_SAFE_INTEGER;

interface PageArgs {
  conversationId: string;
  first: number;
  last: number;
  turnNo: number | null;
  lastMessageSeq: number | null;
  events: string;
}

/**
 * A page, unless one of its seqs is taken: the page with the greatest first seq at or before this
 * one's last must end before this one's first (pages never overlap, so none before it can reach
 * it). Fenced: a taken seq fails the unit of work (`events`).
 */
const insertPage = prepared((db, a: PageArgs) => ({
  compile: () =>
    sql`insert into event_pages (conversation_id, first_seq, last_seq, turn_no, last_message_seq, events)
      select cast(${a.conversationId} as text), cast(${a.first} as integer), cast(${a.last} as integer),
        cast(${a.turnNo} as integer), cast(${a.lastMessageSeq} as integer), cast(${a.events} as text)
      where not exists (select 1 from (select last_seq from event_pages
          where conversation_id = ${a.conversationId} and first_seq <= ${a.last}
          order by first_seq desc limit 1) as before
        where before.last_seq >= ${a.first})
      returning 1 as one`.compile(db),
}));

// The pages with events after `after` (the one holding the next seq, if any, and those after it).
const pagesAfter = prepared((db, a: { conversationId: string; after: number; limit: number }) => ({
  compile: () =>
    sql<Pick<Selectable<EventPagesTable>, 'first_seq' | 'events'>>`select first_seq, events from event_pages
      where conversation_id = ${a.conversationId} and first_seq >= coalesce((select max(first_seq) from event_pages
        where conversation_id = ${a.conversationId} and first_seq <= ${a.after}), 0) and last_seq > ${a.after}
      order by first_seq limit ${a.limit}`.compile(db),
}));

// A conversation's first turn in a process reads its log's head (`EventHub`): one statement.
const rangeOf = prepared((db, a: { conversationId: string }) => ({
  compile: () => {
    const newest = (column: 'last_seq' | 'turn_no' | 'last_message_seq') =>
      sql`(select ${sql.ref(column)} from event_pages where conversation_id = ${a.conversationId}
        ${column === 'last_seq' ? sql`` : sql`and ${sql.ref(column)} is not null`} order by first_seq desc limit 1)`;
    return sql<{
      first: number | null;
      last: number | null;
      turn_no: number | null;
      last_message_seq: number | null;
    }>`select min(first_seq) as first, ${newest('last_seq')} as last, ${newest('turn_no')} as turn_no,
        ${newest('last_message_seq')} as last_message_seq
      from event_pages where conversation_id = ${a.conversationId}`.compile(db);
  },
}));

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
      const pages = pagesOf(events);
      if (pages.length === 0) return;
      const write = async (tx: QueryContext) => {
        // PostgreSQL: the row lock is a statement of its own before the pages, so that their overlap
        // checks (on snapshots taken after it) see every page another writer committed.
        if (tx.dialect === 'postgres')
          for (const conversationId of [...new Set(pages.map((page) => page.conversationId))].sort())
            await lockConversation(tx, conversationId);
        for (const page of pages) await insertPage.fenced(tx, page, 'events');
      };
      // All pages or none; one SQLite statement is atomic on its own.
      if (ctx.inTransaction || (ctx.dialect === 'sqlite' && pages.length === 1)) return write(ctx);
      return ctx.atomic(write);
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
      const after = options.afterSeq ?? 0;
      const limit = options.limit === undefined ? ALL : Math.max(0, options.limit);
      if (limit === 0) return [];
      const events: StoredEvent[] = [];
      // Every page holds at least one event: `limit` pages hold the `limit` events asked for.
      for (const page of await pagesAfter.rows(ctx, { conversationId, after, limit })) {
        for (const event of eventsOf(conversationId, page)) {
          if (event.seq <= after) continue;
          events.push(event);
          if (events.length === limit) return events;
        }
      }
      return events;
    },

    async eventRange(conversationId) {
      const range = await rangeOf.first(ctx, { conversationId });
      if (!range || range.first === null || range.last === null) return undefined;
      return {
        first: Number(range.first),
        last: Number(range.last),
        lastTurnNo: range.turn_no === null ? null : Number(range.turn_no),
        lastMessageSeq: range.last_message_seq === null ? null : Number(range.last_message_seq),
      };
    },

    async pruneEvents(conversationId, beforeSeq) {
      const deleted = await db
        .deleteFrom('event_pages')
        .where('conversation_id', '=', conversationId)
        .where('last_seq', '<', beforeSeq)
        .returning(['first_seq', 'last_seq'])
        .execute();
      let count = deleted.reduce((sum, page) => sum + Number(page.last_seq) - Number(page.first_seq) + 1, 0);
      // The page that straddles `beforeSeq` keeps only its events from there on.
      const straddling = await db
        .selectFrom('event_pages')
        .select(['first_seq', 'events'])
        .where('conversation_id', '=', conversationId)
        .where('first_seq', '<', beforeSeq)
        .executeTakeFirst();
      if (straddling) {
        const kept = eventsOf(conversationId, straddling).filter((event) => event.seq >= beforeSeq);
        const [page] = pagesOf(kept);
        await db
          .updateTable('event_pages')
          .set({
            first_seq: page!.first,
            turn_no: page!.turnNo,
            last_message_seq: page!.lastMessageSeq,
            events: page!.events,
          })
          .where('conversation_id', '=', conversationId)
          .where('first_seq', '=', straddling.first_seq)
          .execute();
        count += Number(page!.first) - Number(straddling.first_seq);
      }
      return count;
    },
  };
}

/** `events` as pages: runs of one conversation's consecutive seqs, `PAGE_EVENTS` at most each. */
function pagesOf(events: readonly StoredEvent[]): PageArgs[] {
  const pages: PageArgs[] = [];
  let run: StoredEvent[] = [];
  const close = () => {
    if (run.length === 0) return;
    const first = run[0]!;
    const last = run.at(-1)!;
    let turnNo: number | null = null;
    let lastMessageSeq: number | null = null;
    for (const event of run) {
      if (event.turnNo !== null) turnNo = event.turnNo;
      const messageSeq = event.type === 'final' ? (event.payload.data as { messageSeq?: unknown })?.messageSeq : null;
      if (typeof messageSeq === 'number') lastMessageSeq = messageSeq;
    }
    const elements = run.map((event) => ({
      type: event.type,
      turn: event.turnNo,
      at: toMs(event.at),
      payload: event.payload,
    }));
    pages.push({
      conversationId: first.conversationId,
      first: first.seq,
      last: last.seq,
      turnNo,
      lastMessageSeq,
      events: encodePage(elements),
    });
    run = [];
  };
  for (const event of events) {
    const previous = run.at(-1);
    if (
      previous &&
      (event.conversationId !== previous.conversationId || event.seq !== previous.seq + 1 || run.length >= PAGE_EVENTS)
    )
      close();
    run.push(event);
  }
  close();
  return pages;
}

/** A page's events: seqs from its first, in order. */
function eventsOf(conversationId: string, page: { first_seq: number; events: string }): StoredEvent[] {
  const first = Number(page.first_seq);
  return decodePage(page.events).map((element, index) => ({
    conversationId,
    seq: first + index,
    turnNo: element.turn,
    type: element.type,
    payload: element.payload,
    at: fromMs(element.at),
  }));
}
