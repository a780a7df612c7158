import { isBlank } from '../../core/blank.ts';
import { z } from 'zod';
import type { DeliveryReceipt, DeliveryStatus } from '../../core/domain.ts';

/**
 * The parts of a WhatsApp Cloud API webhook we act on, read leniently: unknown fields and change
 * kinds are ignored (Meta adds them without notice), and one bad message never hides the others.
 */
export interface WhatsAppInbound {
  /** The `wamid.` id: providers retry for days, so it deduplicates. */
  messageId: string;
  phoneNumberId: string | null;
  /** Digits of the sender's number, when Meta still sends it. */
  waId: string | null;
  /** The business-scoped user id, when present (2026+). */
  userId: string | null;
  profileName: string | null;
  sentAt: Date | null;
  /** The text to act on, or null for content we cannot read (then `type` says what it was). */
  text: string | null;
  type: string;
}

export interface WhatsAppWebhook {
  messages: WhatsAppInbound[];
  /** `at` is null when the status carried no readable timestamp. */
  receipts: Array<Omit<DeliveryReceipt, 'channel' | 'at'> & { at: Date | null; errorCode: number | null }>;
  /** Parts that could not be read, for the log. */
  skipped: string[];
}

const id = z.string().min(1).max(512);
/** An optional field: absent, null or unreadable all read as null, never losing the message. */
const lenient = <T extends z.ZodType>(schema: T) => schema.nullish().catch(null);
/** Only the id is required: a message we cannot read is still answered (as unsupported). */
const message = z.looseObject({
  id,
  from: lenient(z.string().max(64)),
  from_user_id: lenient(z.string().max(200)),
  timestamp: lenient(z.string().max(20)),
  type: z.string().max(40).catch('unknown'),
  text: lenient(z.looseObject({ body: z.string() })),
  interactive: lenient(
    z.looseObject({
      type: z.string(),
      button_reply: lenient(z.looseObject({ id: z.string(), title: z.string() })),
      list_reply: lenient(z.looseObject({ id: z.string(), title: z.string() })),
    }),
  ),
  button: lenient(z.looseObject({ text: z.string(), payload: lenient(z.string()) })),
});
const status = z.looseObject({
  id,
  status: z.string().max(40),
  timestamp: lenient(z.string().max(20)),
  errors: lenient(
    z.array(z.looseObject({ code: lenient(z.number()), title: lenient(z.string()), message: lenient(z.string()) })),
  ),
});
const contact = z.looseObject({
  wa_id: lenient(z.string()),
  user_id: lenient(z.string()),
  profile: lenient(z.looseObject({ name: lenient(z.string()) })),
});
const value = z.looseObject({
  metadata: z.looseObject({ phone_number_id: z.string().optional() }).optional(),
  contacts: z.array(z.unknown()).nullish(),
  messages: z.array(z.unknown()).nullish(),
  statuses: z.array(z.unknown()).nullish(),
});
export const whatsappEnvelope = z.looseObject({
  object: z.string(),
  entry: z.array(
    z.looseObject({ changes: z.array(z.looseObject({ field: z.string(), value: z.unknown() })).default([]) }),
  ),
});

const STATUS_MAP: Record<string, DeliveryStatus> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  played: 'read',
  failed: 'failed',
};

/** Reads an envelope that already passed `whatsappEnvelope`, all of it at once. */
export function readWhatsAppWebhook(envelope: z.output<typeof whatsappEnvelope>): WhatsAppWebhook {
  const result: WhatsAppWebhook = { messages: [], receipts: [], skipped: [] };
  for (const part of readWhatsAppWebhookInParts(envelope, Number.POSITIVE_INFINITY)) {
    result.messages.push(...part.messages);
    result.receipts.push(...part.receipts);
    result.skipped.push(...part.skipped);
  }
  return result;
}

/**
 * Reads an envelope in parts of at most `size` messages and statuses, each read only when asked
 * for: a batch of thousands is parsed a part at a time, and the caller can yield between parts.
 */
export function* readWhatsAppWebhookInParts(
  envelope: z.output<typeof whatsappEnvelope>,
  size: number,
): Generator<WhatsAppWebhook, void, void> {
  let part: WhatsAppWebhook = { messages: [], receipts: [], skipped: [] };
  for (const item of readItems(envelope)) {
    if (item.kind === 'message') part.messages.push(item.message);
    else if (item.kind === 'receipt') part.receipts.push(item.receipt);
    else part.skipped.push(item.reason);
    if (part.messages.length + part.receipts.length < size) continue;
    yield part;
    part = { messages: [], receipts: [], skipped: [] };
  }
  if (part.messages.length + part.receipts.length + part.skipped.length > 0) yield part;
}

type Item =
  | { kind: 'message'; message: WhatsAppInbound }
  | { kind: 'receipt'; receipt: WhatsAppWebhook['receipts'][number] }
  | { kind: 'skipped'; reason: string };

function* readItems(envelope: z.output<typeof whatsappEnvelope>): Generator<Item, void, void> {
  for (const entry of envelope.entry) {
    for (const change of entry.changes) {
      if (change.field !== 'messages') continue;
      const parsed = value.safeParse(change.value);
      if (parsed.success) yield* readValue(parsed.data);
      else yield { kind: 'skipped', reason: 'a "messages" change without a readable value' };
    }
  }
}

function* readValue(data: z.output<typeof value>): Generator<Item, void, void> {
  const phoneNumberId = data.metadata?.phone_number_id ?? null;
  const contacts = indexContacts(data.contacts ?? []);
  for (const raw of data.messages ?? []) {
    const item = readMessage(raw, phoneNumberId, contacts);
    if (item) yield item;
  }
  for (const raw of data.statuses ?? []) {
    const parsed = status.safeParse(raw);
    if (!parsed.success) {
      yield { kind: 'skipped', reason: 'a status that could not be read' };
      continue;
    }
    const mapped = Object.hasOwn(STATUS_MAP, parsed.data.status) ? STATUS_MAP[parsed.data.status] : undefined;
    if (!mapped) continue;
    const error = parsed.data.errors?.[0];
    yield {
      kind: 'receipt',
      receipt: {
        providerMessageId: parsed.data.id,
        status: mapped,
        at: unixSeconds(parsed.data.timestamp),
        error: error ? [error.code, error.title ?? error.message].filter(Boolean).join(' ') : null,
        errorCode: error?.code ?? null,
      },
    };
  }
}

function readMessage(raw: unknown, phoneNumberId: string | null, contacts: ContactIndex): Item | undefined {
  const parsed = message.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      kind: 'skipped',
      reason: `a message that could not be read (${issue?.path.join('.')}: ${issue?.message})`,
    };
  }
  const m = parsed.data;
  if (m.type === 'system') return undefined; // e.g. user_changed_number: not something the person said
  const sender = senderOf(m, contacts);
  const waId = m.from ?? sender?.wa_id ?? null;
  const userId = m.from_user_id ?? sender?.user_id ?? null;
  if (!waId && !userId) return { kind: 'skipped', reason: `message ${m.id} names no sender` };
  return {
    kind: 'message',
    message: {
      messageId: m.id,
      phoneNumberId,
      waId,
      userId,
      profileName: sender?.profile?.name ?? null,
      sentAt: unixSeconds(m.timestamp),
      text: textOf(m),
      type: m.type === 'interactive' ? `interactive:${m.interactive?.type ?? 'unknown'}` : m.type,
    },
  };
}

/**
 * A change's contacts by user id and by wa_id (first one wins, as a search in order would find),
 * built without parsing them: a batch of thousands parses only the contacts its messages name.
 */
interface ContactIndex {
  readonly all: readonly unknown[];
  /** How many contacts are objects at all (the only ones `contact` can read). */
  readonly readable: number;
  readonly byUserId: ReadonlyMap<string, number>;
  readonly byWaId: ReadonlyMap<string, number>;
}

function indexContacts(all: readonly unknown[]): ContactIndex {
  const byUserId = new Map<string, number>();
  const byWaId = new Map<string, number>();
  let readable = 0;
  for (const [index, raw] of all.entries()) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) continue;
    readable += 1;
    const { user_id: userId, wa_id: waId } = raw as Record<string, unknown>;
    if (typeof userId === 'string' && !byUserId.has(userId)) byUserId.set(userId, index);
    if (typeof waId === 'string' && !byWaId.has(waId)) byWaId.set(waId, index);
  }
  return { all, readable, byUserId, byWaId };
}

/**
 * The contact entry of the message's sender: the one whose user id or wa_id matches. Only a
 * message that names no sender at all borrows the change's single contact; another person's
 * contact is never used (their replies would go to the wrong person).
 */
function senderOf(m: z.output<typeof message>, contacts: ContactIndex) {
  const byUser = m.from_user_id ? contacts.byUserId.get(m.from_user_id) : undefined;
  const byWa = m.from ? contacts.byWaId.get(m.from) : undefined;
  const match = byUser === undefined ? byWa : byWa === undefined ? byUser : Math.min(byUser, byWa);
  if (match !== undefined) return readContact(contacts.all[match]);
  if (m.from || m.from_user_id || contacts.readable !== 1) return undefined;
  return readContact(contacts.all.find((raw) => raw !== null && typeof raw === 'object' && !Array.isArray(raw)));
}

function readContact(raw: unknown) {
  const parsed = contact.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** Text, a reply button or list choice (its title, which is the option's label), a template button. */
function textOf(m: z.output<typeof message>): string | null {
  // Blank text: nothing to answer but politely.
  if (m.type === 'text') return m.text && !isBlank(m.text.body) ? m.text.body : null;
  if (m.type === 'interactive') return m.interactive?.button_reply?.title ?? m.interactive?.list_reply?.title ?? null;
  if (m.type === 'button') return m.button?.text ?? null;
  return null;
}

function unixSeconds(raw: string | null | undefined): Date | null {
  if (!raw || !/^\d{1,12}$/.test(raw)) return null;
  return new Date(Number(raw) * 1000);
}
