import type { Selectable } from 'kysely';
import type { MessageKind, OutboxItem, OutboxStatus } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { OutboxTable } from './schema.ts';
import { fromMs, fromMsOrNull, oneOf, pollFromText, pollToText, toMs } from './codec.ts';

type OutboxOperations = Pick<
  StoreOperations,
  'enqueueOutbox' | 'getOutbox' | 'listDueOutbox' | 'markOutboxSent' | 'markOutboxAttemptFailed' | 'listOutbox'
>;

const STATUSES = ['pending', 'sent', 'failed'] as const satisfies readonly OutboxStatus[];
const KINDS = ['text', 'poll'] as const satisfies readonly MessageKind[];

export function outboxQueries({ db }: QueryContext): OutboxOperations {
  return {
    async enqueueOutbox(items) {
      if (items.length === 0) return;
      await db
        .insertInto('outbox')
        .values(
          items.map((item) => ({
            id: item.id,
            conversation_id: item.conversationId,
            participant_id: item.participantId,
            channel: item.channel,
            recipient: item.recipient,
            kind: item.kind,
            text: item.text,
            poll: pollToText(item.poll),
            idempotency_key: item.idempotencyKey,
            status: 'pending',
            attempts: 0,
            next_attempt_at: toMs(item.nextAttemptAt),
            last_error: null,
            created_at: toMs(item.createdAt),
            sent_at: null,
          })),
        )
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

    async markOutboxSent(id, at, attempts) {
      await db.updateTable('outbox').set({ status: 'sent', sent_at: toMs(at), attempts }).where('id', '=', id).execute();
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
      const rows = await db.selectFrom('outbox').selectAll().where('conversation_id', '=', conversationId).orderBy('ordinal').execute();
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
  };
}
