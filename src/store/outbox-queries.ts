import { sql, type Selectable } from 'kysely';
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  type MessageKind,
  type NewOutboxItem,
  type OutboxItem,
  type OutboxStatus,
} from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { OutboxTable } from './schema.ts';
import { fromMs, fromMsOrNull, oneOf, pollFromText, pollToText, toMs } from './codec.ts';
import { prepared, PreparedFamily, preparedInsert } from './prepared.ts';

type OutboxOperations = Pick<
  StoreOperations,
  | 'enqueueOutbox'
  | 'hasPendingOutbox'
  | 'releaseOutbox'
  | 'getOutbox'
  | 'listDueOutbox'
  | 'claimDueOutbox'
  | 'markOutboxSent'
  | 'markOutboxSentMany'
  | 'markOutboxAttemptFailed'
  | 'listOutbox'
  | 'recordDeliveryReceipt'
>;

const STATUSES = ['pending', 'sent', 'failed'] as const satisfies readonly OutboxStatus[];

/**
 * SQLite: marks sends without a provider id (`[id, at ms, attempts]` rows as one JSON parameter) in
 * one statement. PostgreSQL marks each row with a statement of its own (`markSentRow`): the join a
 * set of rows needs would keep the plan the table's first statistics gave it, a hash join over the
 * whole table while the outbox was small, for as long as the connection lives.
 */
const markSentRows = prepared((db, a: { rows: string }) => ({
  compile: () =>
    sql`update outbox set status = 'sent', sent_at = m.at, attempts = m.attempts
        from (select value ->> 0 as id, value ->> 1 as at, value ->> 2 as attempts from json_each(${a.rows})) as m
        where outbox.id = m.id`.compile(db),
}));
const markSentRow = prepared((db, a: { id: string; at: number; attempts: number }) =>
  db.updateTable('outbox').set({ status: 'sent', sent_at: a.at, attempts: a.attempts }).where('id', '=', a.id),
);
const KINDS = ['text', 'poll'] as const satisfies readonly MessageKind[];

/** The statuses ranked below `status`: the only ones a receipt of `status` may replace. */
const below = (status: DeliveryStatus) => DELIVERY_STATUSES.slice(0, DELIVERY_STATUSES.indexOf(status));

const pendingOf = prepared((db, a: { conversationId: string }) =>
  db
    .selectFrom('outbox')
    .select('id')
    .where('conversation_id', '=', a.conversationId)
    .where('status', '=', 'pending')
    .limit(1),
);
const insertRows = preparedInsert('outbox');
const COLUMNS = [
  'id',
  'conversation_id',
  'participant_id',
  'channel',
  'recipient',
  'kind',
  'text',
  'poll',
  'idempotency_key',
  'next_attempt_at',
  'created_at',
] as const;
type Column = (typeof COLUMNS)[number];
const AT = COLUMNS.indexOf('next_attempt_at');
const BIGINT_COLUMNS: ReadonlySet<Column> = new Set(['next_attempt_at', 'created_at']);
/**
 * One conversation's rows in one statement, claimed until `claimUntil` unless the conversation
 * already has a row waiting (decided once, before any row is written: an uncorrelated subquery;
 * on PostgreSQL a statement never sees its own rows). Returns each row's `next_attempt_at`. Times
 * are cast: PostgreSQL reads untyped VALUES as text.
 */
const insertClaimed = new PreparedFamily((count: number) =>
  prepared((db, a: Record<string, unknown>) => ({
    compile: () => {
      const cell = (row: number, column: Column) =>
        BIGINT_COLUMNS.has(column) ? sql`cast(${a[`${row}:${column}`]} as bigint)` : sql`${a[`${row}:${column}`]}`;
      const rows = Array.from(
        { length: count },
        (_, row) => sql`(${sql.join(COLUMNS.map((column) => cell(row, column)))})`,
      );
      const value = (index: number) => sql.ref(`column${index + 1}`);
      const pendingRow = sql`select 1 from outbox where conversation_id = ${a.conversationId} and status = 'pending'`;
      const at = sql`case when exists (${pendingRow}) then ${value(AT)} else cast(${a.claimUntil} as bigint) end`;
      return sql`insert into outbox (${sql.join(COLUMNS.map((column) => sql.ref(column)))}, status, attempts)
        select ${sql.join(COLUMNS.map((_, index) => (index === AT ? at : value(index))))},
          'pending', 0
        from (values ${sql.join(rows)}) as v returning next_attempt_at`.compile(db);
    },
  })),
);

/** A new row's own columns (status, attempts and the rest take their first values where it is written). */
function outboxRow(item: NewOutboxItem, nextAttemptAt: Date) {
  return {
    id: item.id,
    conversation_id: item.conversationId,
    participant_id: item.participantId,
    channel: item.channel,
    recipient: item.recipient,
    kind: item.kind,
    text: item.text,
    poll: pollToText(item.poll),
    idempotency_key: item.idempotencyKey,
    next_attempt_at: toMs(nextAttemptAt),
    created_at: toMs(item.createdAt),
  } satisfies Record<Column, string | number | null>;
}

export function outboxQueries(ctx: QueryContext): OutboxOperations {
  const { db } = ctx;
  /**
   * Raises the delivery status of the item with this provider id, in one statement: the WHERE
   * clause makes it monotonic however receipts interleave.
   */
  const raise = async (
    channel: string,
    providerMessageId: string,
    status: DeliveryStatus,
    at: Date,
    error: string | null,
  ) => {
    const result = await db
      .updateTable('outbox')
      .set({
        delivery_status: status,
        delivery_status_at: toMs(at),
        ...(error === null ? {} : { delivery_error: error }),
      })
      .where('channel', '=', channel)
      .where('provider_message_id', '=', providerMessageId)
      .where((eb) => {
        const lower = below(status);
        return lower.length === 0
          ? eb('delivery_status', 'is', null)
          : eb.or([eb('delivery_status', 'is', null), eb('delivery_status', 'in', lower)]);
      })
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  };

  return {
    async enqueueOutbox(items, options = {}) {
      if (items.length === 0) return false;
      const conversationId = items[0]!.conversationId;
      if (options.claimUntil && !items.every((item) => item.conversationId === conversationId))
        throw new Error('enqueueOutbox: rows written claimed must belong to one conversation');
      if (options.claimUntil) {
        const args: Record<string, unknown> = { conversationId, claimUntil: toMs(options.claimUntil) };
        items.forEach((item, row) => {
          const values = outboxRow(item, item.nextAttemptAt);
          for (const column of COLUMNS) args[`${row}:${column}`] = values[column];
        });
        const [first] = await insertClaimed.of(items.length).rows(ctx, args);
        return Number((first as { next_attempt_at: number }).next_attempt_at) === args.claimUntil;
      }
      await insertRows(
        ctx,
        items.map((item) => ({
          ...outboxRow(item, item.nextAttemptAt),
          status: 'pending' as const,
          attempts: 0,
          last_error: null,
          sent_at: null,
        })),
      );
      return false;
    },

    async hasPendingOutbox(conversationId) {
      return (await pendingOf.first(ctx, { conversationId })) !== undefined;
    },

    async releaseOutbox(ids, at) {
      if (ids.length === 0) return;
      await db
        .updateTable('outbox')
        .set({ next_attempt_at: toMs(at) })
        .where('id', 'in', [...ids])
        .where('status', '=', 'pending')
        .execute();
    },

    async getOutbox(id) {
      const row = await db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toOutboxItem(row);
    },

    async listDueOutbox(now, limit) {
      if (limit <= 0) return [];
      const rows = await db
        .selectFrom('outbox')
        .selectAll()
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', toMs(now))
        .orderBy('next_attempt_at')
        .orderBy('created_at')
        .orderBy('ordinal')
        .limit(limit)
        .execute();
      return rows.map(toOutboxItem);
    },

    async claimDueOutbox(now, limit, leaseUntil) {
      if (limit <= 0) return [];
      const nowMs = toMs(now);
      return ctx.atomic(async (tx) => {
        let due = tx.db
          .selectFrom('outbox as o')
          .select('o.id')
          .where('o.status', '=', 'pending')
          .where('o.next_attempt_at', '<=', nowMs)
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('outbox as e')
                  .select('e.id')
                  .whereRef('e.conversation_id', '=', 'o.conversation_id')
                  .where('e.status', '=', 'pending')
                  .whereRef('e.ordinal', '<', 'o.ordinal'),
              ),
            ),
          )
          .orderBy('o.next_attempt_at')
          .orderBy('o.ordinal')
          .limit(limit);
        if (tx.dialect === 'postgres') due = due.forUpdate().skipLocked();
        const ids = (await due.execute()).map((row) => row.id);
        if (ids.length === 0) return [];
        const rows = await tx.db
          .updateTable('outbox')
          .set({ next_attempt_at: toMs(leaseUntil) })
          .where('id', 'in', ids)
          .returningAll()
          .execute();
        return rows.sort((a, b) => Number(a.ordinal) - Number(b.ordinal)).map(toOutboxItem);
      });
    },

    async markOutboxSent(id, at, attempts, providerMessageId = null) {
      const row = await db
        .updateTable('outbox')
        .set({ status: 'sent', sent_at: toMs(at), attempts, provider_message_id: providerMessageId })
        .where('id', '=', id)
        .returning('channel')
        .executeTakeFirst();
      if (!row || providerMessageId === null) return;
      const early = await db
        .selectFrom('delivery_receipts')
        .selectAll()
        .where('channel', '=', row.channel)
        .where('provider_message_id', '=', providerMessageId)
        .execute();
      for (const receipt of early) {
        await raise(
          row.channel,
          providerMessageId,
          oneOf(DELIVERY_STATUSES, receipt.status, 'delivery status'),
          fromMs(receipt.at),
          receipt.error,
        );
      }
    },

    async markOutboxSentMany(marks) {
      const plain = marks.filter((mark) => !mark.providerMessageId);
      const [only] = plain;
      // One mark (the earlier reply's, riding in a turn's commit): an update by id, which took
      // 14 µs a turn on SQLite where the json_each join took 30 (decision 020).
      if (plain.length === 1 && only)
        await markSentRow.write(ctx, { id: only.id, at: toMs(only.at), attempts: only.attempts });
      else if (plain.length > 0 && ctx.dialect === 'sqlite')
        await markSentRows.write(ctx, {
          rows: JSON.stringify(plain.map((mark) => [mark.id, toMs(mark.at), mark.attempts])),
        });
      else if (plain.length > 0)
        // In one transaction (one round trip): the writes go out together, without awaiting each other.
        await ctx.atomic((tx) =>
          Promise.all(plain.map(({ id, at, attempts }) => markSentRow.write(tx, { id, at: toMs(at), attempts }))),
        );
      for (const mark of marks)
        if (mark.providerMessageId) await this.markOutboxSent(mark.id, mark.at, mark.attempts, mark.providerMessageId);
    },

    async recordDeliveryReceipt(receipt) {
      const inserted = await db
        .insertInto('delivery_receipts')
        .values({
          channel: receipt.channel,
          provider_message_id: receipt.providerMessageId,
          status: receipt.status,
          at: toMs(receipt.at),
          error: receipt.error,
        })
        .onConflict((oc) => oc.columns(['channel', 'provider_message_id', 'status']).doNothing())
        .executeTakeFirst();
      const duplicate = Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0;
      if (!duplicate)
        await raise(receipt.channel, receipt.providerMessageId, receipt.status, receipt.at, receipt.error);
      const item = await db
        .selectFrom('outbox')
        .select('id')
        .where('channel', '=', receipt.channel)
        .where('provider_message_id', '=', receipt.providerMessageId)
        .executeTakeFirst();
      return { duplicate, outboxId: item?.id ?? null };
    },

    async markOutboxAttemptFailed(id, { attempts, error, nextAttemptAt }) {
      await db
        .updateTable('outbox')
        .set(
          nextAttemptAt === null
            ? { status: 'failed', attempts, last_error: error }
            : { status: 'pending', attempts, last_error: error, next_attempt_at: toMs(nextAttemptAt) },
        )
        .where('id', '=', id)
        .execute();
    },

    async listOutbox(conversationId) {
      const rows = await db
        .selectFrom('outbox')
        .selectAll()
        .where('conversation_id', '=', conversationId)
        .orderBy('ordinal')
        .execute();
      return rows.map(toOutboxItem);
    },
  };
}

function toOutboxItem(row: Selectable<OutboxTable>): OutboxItem {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    participantId: row.participant_id,
    channel: row.channel,
    recipient: row.recipient,
    kind: oneOf(KINDS, row.kind, 'outbox kind'),
    text: row.text,
    poll: pollFromText(row.poll),
    idempotencyKey: row.idempotency_key,
    status: oneOf(STATUSES, row.status, 'outbox status'),
    attempts: Number(row.attempts),
    nextAttemptAt: fromMs(row.next_attempt_at),
    lastError: row.last_error,
    createdAt: fromMs(row.created_at),
    sentAt: fromMsOrNull(row.sent_at),
    providerMessageId: row.provider_message_id,
    deliveryStatus:
      row.delivery_status === null ? null : oneOf(DELIVERY_STATUSES, row.delivery_status, 'delivery status'),
    deliveryStatusAt: fromMsOrNull(row.delivery_status_at),
    deliveryError: row.delivery_error,
  };
}
