import { sql, type Insertable, type Selectable } from 'kysely';
import type { InboxItem, InboxStatus } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { InboxTable } from './schema.ts';
import { fromMs, fromMsOrNull, oneOf, toMs, toMsOrNull } from './codec.ts';
import { prepared } from './prepared.ts';

type InboxOperations = Pick<
  StoreOperations,
  | 'insertInbox'
  | 'getInbox'
  | 'listPendingInbox'
  | 'setInboxStatus'
  | 'listPendingInboxOf'
  | 'firstInboxFrom'
  | 'completeInbox'
  | 'completeInboxFenced'
>;

const STATUSES = ['pending', 'processed', 'failed', 'ignored'] as const satisfies readonly InboxStatus[];

const insertOnce = prepared((db, a: Insertable<InboxTable>) =>
  db
    .insertInto('inbox')
    .values({
      id: a.id,
      channel: a.channel,
      channel_message_id: a.channel_message_id,
      sender: a.sender,
      text: a.text,
      participant_id: a.participant_id,
      conversation_id: a.conversation_id,
      status: a.status,
      error: a.error,
      received_at: a.received_at,
      processed_at: a.processed_at,
      trace_parent: a.trace_parent,
    })
    .onConflict((oc) => oc.columns(['channel', 'sender', 'channel_message_id']).doNothing())
    .returning((eb) => [
      'id',
      // Whether an earlier item of its conversation was still pending when it arrived.
      eb
        .exists(
          eb
            .selectFrom('inbox as earlier')
            .select('earlier.id')
            .where('earlier.conversation_id', '=', eb.ref('inbox.conversation_id'))
            .where('earlier.status', '=', 'pending')
            .where('earlier.ordinal', '<', eb.ref('inbox.ordinal')),
        )
        .as('behind'),
    ]),
);
const pendingOf = prepared((db, a: { conversationId: string; limit: number }) =>
  db
    .selectFrom('inbox')
    .selectAll()
    .where('conversation_id', '=', a.conversationId)
    .where('status', '=', 'pending')
    .orderBy('ordinal')
    .limit(a.limit),
);
const complete = prepared((db, a: { id: string; status: InboxStatus; processedAt: number; error: string | null }) =>
  db
    .updateTable('inbox')
    .set({ status: a.status, processed_at: a.processedAt, error: a.error })
    .where('id', '=', a.id)
    .where('status', '=', 'pending'),
);

/** `complete` as a fence: the item must still be pending. */
const completeFenced = prepared((db, a: { id: string; status: InboxStatus; processedAt: number }) =>
  db
    .updateTable('inbox')
    .set({ status: a.status, processed_at: a.processedAt, error: null })
    .where('id', '=', a.id)
    .where('status', '=', 'pending')
    .returning(sql<number>`1`.as('one')),
);

export function inboxQueries(ctx: QueryContext): InboxOperations {
  const { db } = ctx;
  return {
    async insertInbox(item) {
      // ON CONFLICT DO NOTHING is race-safe on both dialects: a concurrent duplicate waits for the
      // first writer and then writes nothing. NULL channel message ids never conflict. Ids are
      // per sender: two clients may both send "m1" (decision 008).
      const inserted = await insertOnce.first(ctx, inboxRow(item));
      if (inserted) return { item: { ...item }, duplicate: false, behind: Boolean(inserted.behind) };
      return { item: await earlierInbox(ctx, item), duplicate: true };
    },

    async getInbox(id) {
      const row = await db.selectFrom('inbox').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toInboxItem(row);
    },

    async listPendingInbox(limit) {
      let query = db
        .selectFrom('inbox')
        .selectAll()
        .where('status', '=', 'pending')
        .orderBy('received_at')
        .orderBy('ordinal');
      if (limit !== undefined) query = query.limit(Math.max(0, limit));
      return (await query.execute()).map(toInboxItem);
    },

    async listPendingInboxOf(conversationId, limit) {
      const rows = await pendingOf.rows(ctx, { conversationId, limit: Math.max(0, limit) });
      return rows.map(toInboxItem);
    },

    async firstInboxFrom(channel, sender, since) {
      const row = await db
        .selectFrom('inbox')
        .selectAll()
        .where('channel', '=', channel)
        .where('sender', '=', sender)
        .where('participant_id', 'is', null)
        .where('received_at', '>=', toMs(since))
        .orderBy('received_at')
        .orderBy('ordinal')
        .limit(1)
        .executeTakeFirst();
      return row && toInboxItem(row);
    },

    async completeInbox(id, status, at, error = null) {
      return (await complete.changed(ctx, { id, status, processedAt: toMs(at), error })) === 1;
    },

    async completeInboxFenced(id, status, at) {
      await completeFenced.fenced(ctx, { id, status, processedAt: toMs(at) }, 'inbox');
    },

    async setInboxStatus(id, status, at, error = null) {
      await db
        .updateTable('inbox')
        .set({ status, processed_at: status === 'pending' ? null : toMs(at), error })
        .where('id', '=', id)
        .execute();
    },
  };
}

/** An inbox item as its row. */
export function inboxRow(item: InboxItem): Insertable<InboxTable> {
  return {
    id: item.id,
    channel: item.channel,
    channel_message_id: item.channelMessageId,
    sender: item.sender,
    text: item.text,
    participant_id: item.participantId,
    conversation_id: item.conversationId,
    status: item.status,
    error: item.error,
    received_at: toMs(item.receivedAt),
    processed_at: toMsOrNull(item.processedAt),
    trace_parent: item.traceParent ?? null,
  };
}

/** The item recorded before `item` with the same sender and channel message id (a redelivery, or a reused id). */
export async function earlierInbox({ db }: QueryContext, item: InboxItem): Promise<InboxItem> {
  const earlier = await db
    .selectFrom('inbox')
    .selectAll()
    .where('channel', '=', item.channel)
    .where('sender', '=', item.sender)
    .where('channel_message_id', '=', item.channelMessageId)
    .executeTakeFirstOrThrow();
  return toInboxItem(earlier);
}

function toInboxItem(row: Selectable<InboxTable>): InboxItem {
  return {
    id: row.id,
    channel: row.channel,
    channelMessageId: row.channel_message_id,
    sender: row.sender,
    text: row.text,
    participantId: row.participant_id,
    conversationId: row.conversation_id,
    status: oneOf(STATUSES, row.status, 'inbox status'),
    error: row.error,
    receivedAt: fromMs(row.received_at),
    processedAt: fromMsOrNull(row.processed_at),
    ...(row.trace_parent ? { traceParent: row.trace_parent } : {}),
  };
}
