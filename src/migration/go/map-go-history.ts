import { z } from 'zod';
import type { IdGenerator } from '../../core/clock.ts';
import {
  DELIVERY_STATUSES,
  type DeliveryReceipt,
  type DeliveryStatus,
  type NewMessage,
  type NewOutboxItem,
} from '../../core/domain.ts';
import { problemsIn, readAll, readGo, type GoRead } from './go-json.ts';

/**
 * A row of Go's `receipts` as read: one `sent` per send call, then `delivered` / `read` from
 * WhatsApp. `time` is Unix seconds as Go wrote it, or whatever a hand edit left in SQLite.
 */
export interface GoReceiptRow {
  id: number;
  recipient: string;
  status: string;
  time: unknown;
}

/** A row of Go's `responses` as read: every message a number sent in. */
export interface GoResponseRow {
  id: number;
  sender: string;
  body: string;
  time: unknown;
}

/** A receipt checked: `time` Unix seconds. */
export type GoReceipt = Omit<GoReceiptRow, 'time'> & { time: number };
export type GoResponse = Omit<GoResponseRow, 'time'> & { time: number };

/** Go's `models.MessageStatus` values; `cancelled` (never written by its code) is read and left out. */
const GO_RECEIPT_STATUSES = ['sent', 'delivered', 'read', 'failed', 'cancelled'] as const;

/** Go's `.Unix()`: whole seconds after 1970. */
const unixSeconds = z.unknown().transform((value, ctx) => {
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  const got = typeof value === 'string' ? JSON.stringify(value) : String(value);
  ctx.addIssue({ code: 'custom', message: `must be Unix seconds, a whole number (got ${got})` });
  return z.NEVER;
});
const goReceipt = z.object({
  id: z.number(),
  recipient: z.string(),
  status: z.enum(GO_RECEIPT_STATUSES),
  time: unixSeconds,
});
const goResponse = z.object({ id: z.number(), sender: z.string(), body: z.string(), time: unixSeconds });

/**
 * A participant's receipts and responses, every row checked: a time that is no time would fail
 * their write (a dry run says so first), a status Go does not write would be lost unseen.
 */
export function readGoRecords(
  receipts: readonly GoReceiptRow[],
  responses: readonly GoResponseRow[],
): GoRead<{ receipts: GoReceipt[]; responses: GoResponse[] }> {
  const checkedReceipts = readAll(receipts.map((row) => readGo(goReceipt, row, 'receipts', `receipt ${row.id}`)));
  const checkedResponses = readAll(responses.map((row) => readGo(goResponse, row, 'responses', `response ${row.id}`)));
  if ('problems' in checkedReceipts || 'problems' in checkedResponses)
    return { problems: problemsIn(checkedReceipts, checkedResponses) };
  return { value: { receipts: checkedReceipts.value, responses: checkedResponses.value } };
}

/** A Go send as a delivery here: sent at its time, and what WhatsApp reported of it. */
export interface ImportedDelivery {
  item: NewOutboxItem;
  sentAt: Date;
  reports: DeliveryReceipt[];
}

/** Go sent over WhatsApp (a linked device); these rows are history, never sent again. */
const GO_CHANNEL = 'whatsapp';
const at = (seconds: number) => new Date(seconds * 1000);

/**
 * What a participant said that Go's history does not hold: everything before it was trimmed to
 * its last 50 messages, and any message no turn recorded. The kept history's user messages are
 * the participant's last responses (each kept ~2 s after it came in), matched from the end by
 * text; every other response comes in at its time, the kept history's order untouched.
 */
export function withResponses(
  history: readonly NewMessage[],
  responses: readonly GoResponse[],
  conversationId: string,
  ids: IdGenerator,
): NewMessage[] {
  const kept = history.filter((message) => message.role === 'user').map((message) => message.text);
  const missing = unmatched(responses, kept).map((response) => ({
    id: ids.next('msg'),
    conversationId,
    role: 'user' as const,
    kind: 'text' as const,
    text: response.body,
    poll: null,
    source: 'participant' as const,
    turnId: null,
    createdAt: at(response.time),
  }));
  return mergeByTime(history, missing);
}

/**
 * `inserts` (oldest first) placed among `messages` by time, the messages' own order untouched:
 * each goes before the first message later than it, so after one of the same instant.
 */
export function mergeByTime(messages: readonly NewMessage[], inserts: readonly NewMessage[]): NewMessage[] {
  const pending = [...inserts];
  const merged: NewMessage[] = [];
  for (const message of messages) {
    while (pending.length > 0 && pending[0]!.createdAt < message.createdAt) merged.push(pending.shift()!);
    merged.push(message);
  }
  return [...merged, ...pending];
}

/** Responses not matched, from the end, to the kept history's user messages. */
function unmatched(responses: readonly GoResponse[], kept: readonly string[]): GoResponse[] {
  const matched = new Set<number>();
  let next = responses.length - 1;
  for (let index = kept.length - 1; index >= 0; index -= 1) {
    let candidate = next;
    while (candidate >= 0 && responses[candidate]!.body !== kept[index]) candidate -= 1;
    if (candidate < 0) continue; // not a response (a history kept otherwise): look on for the earlier ones
    matched.add(candidate);
    next = candidate - 1;
  }
  return responses.filter((response, index) => !matched.has(index) && response.body.trim() !== '');
}

/**
 * Go's receipts of one number as deliveries: each `sent` row is a message that went out (its text
 * Go did not keep: scheduled prompts, polls and reminders are nowhere else), and each `delivered`,
 * `read` or `failed` row is WhatsApp's report on one of the sends before it. Go's receipts name no
 * message, so a report goes to the oldest earlier send without one of its kind (WhatsApp reports
 * messages in the order they went out). Rows are read in Go's order (`id`).
 */
export function goDeliveries(
  receipts: readonly GoReceipt[],
  target: { conversationId: string; participantId: string; phoneNumber: string },
  ids: IdGenerator,
): ImportedDelivery[] {
  const deliveries: ImportedDelivery[] = [];
  for (const receipt of [...receipts].sort((a, b) => Number(a.id) - Number(b.id))) {
    if (receipt.status === 'sent') deliveries.push(delivery(receipt, target, ids));
    else if (isReport(receipt.status)) {
      const status = receipt.status;
      const reported = deliveries.find((candidate) => !candidate.reports.some((report) => report.status === status));
      reported?.reports.push({
        channel: GO_CHANNEL,
        providerMessageId: reported.item.idempotencyKey,
        status,
        at: at(receipt.time),
        error: null,
      });
    }
  }
  return deliveries;
}

function isReport(status: string): status is DeliveryStatus {
  return status !== 'sent' && (DELIVERY_STATUSES as readonly string[]).includes(status);
}

function delivery(
  receipt: GoReceipt,
  target: { conversationId: string; participantId: string; phoneNumber: string },
  ids: IdGenerator,
): ImportedDelivery {
  const sentAt = at(receipt.time);
  return {
    item: {
      id: ids.next('out'),
      conversationId: target.conversationId,
      participantId: target.participantId,
      channel: GO_CHANNEL,
      recipient: target.phoneNumber,
      kind: 'text',
      text: '',
      poll: null,
      idempotencyKey: `go-receipt:${receipt.id}`,
      nextAttemptAt: sentAt,
      createdAt: sentAt,
    },
    sentAt,
    reports: [],
  };
}
