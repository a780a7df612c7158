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
  errors: lenient(z.array(z.looseObject({ code: lenient(z.number()), title: lenient(z.string()), message: lenient(z.string()) }))),
});
const contact = z.looseObject({ wa_id: lenient(z.string()), user_id: lenient(z.string()), profile: lenient(z.looseObject({ name: lenient(z.string()) })) });
const value = z.looseObject({
  metadata: z.looseObject({ phone_number_id: z.string().optional() }).optional(),
  contacts: z.array(z.unknown()).nullish(),
  messages: z.array(z.unknown()).nullish(),
  statuses: z.array(z.unknown()).nullish(),
});
export const whatsappEnvelope = z.looseObject({
  object: z.string(),
  entry: z.array(z.looseObject({ changes: z.array(z.looseObject({ field: z.string(), value: z.unknown() })).default([]) })),
});

const STATUS_MAP: Record<string, DeliveryStatus> = { sent: 'sent', delivered: 'delivered', read: 'read', played: 'read', failed: 'failed' };

/** Reads an envelope that already passed `whatsappEnvelope`. */
export function readWhatsAppWebhook(envelope: z.output<typeof whatsappEnvelope>): WhatsAppWebhook {
  const result: WhatsAppWebhook = { messages: [], receipts: [], skipped: [] };
  for (const entry of envelope.entry) {
    for (const change of entry.changes) {
      if (change.field !== 'messages') continue;
      const parsed = value.safeParse(change.value);
      if (!parsed.success) {
        result.skipped.push('a "messages" change without a readable value');
        continue;
      }
      readValue(parsed.data, result);
    }
  }
  return result;
}

function readValue(data: z.output<typeof value>, result: WhatsAppWebhook): void {
  const phoneNumberId = data.metadata?.phone_number_id ?? null;
  const contacts = (data.contacts ?? []).flatMap((raw) => {
    const parsed = contact.safeParse(raw);
    return parsed.success ? [parsed.data] : [];
  });
  for (const raw of data.messages ?? []) {
    const parsed = message.safeParse(raw);
    if (!parsed.success) {
      result.skipped.push(`a message that could not be read (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message})`);
      continue;
    }
    const m = parsed.data;
    if (m.type === 'system') continue; // e.g. user_changed_number: not something the person said
    const sender = senderOf(m, contacts);
    const waId = m.from ?? sender?.wa_id ?? null;
    const userId = m.from_user_id ?? sender?.user_id ?? null;
    if (!waId && !userId) {
      result.skipped.push(`message ${m.id} names no sender`);
      continue;
    }
    result.messages.push({
      messageId: m.id,
      phoneNumberId,
      waId,
      userId,
      profileName: sender?.profile?.name ?? null,
      sentAt: unixSeconds(m.timestamp),
      text: textOf(m),
      type: m.type === 'interactive' ? `interactive:${m.interactive?.type ?? 'unknown'}` : m.type,
    });
  }
  for (const raw of data.statuses ?? []) {
    const parsed = status.safeParse(raw);
    const mapped = parsed.success && Object.hasOwn(STATUS_MAP, parsed.data.status) ? STATUS_MAP[parsed.data.status] : undefined;
    if (!parsed.success || !mapped) {
      if (!parsed.success) result.skipped.push('a status that could not be read');
      continue;
    }
    const error = parsed.data.errors?.[0];
    result.receipts.push({
      providerMessageId: parsed.data.id,
      status: mapped,
      at: unixSeconds(parsed.data.timestamp),
      error: error ? [error.code, error.title ?? error.message].filter(Boolean).join(' ') : null,
      errorCode: error?.code ?? null,
    });
  }
}

/**
 * The contact entry of the message's sender: the one whose user id or wa_id matches. Only a
 * message that names no sender at all borrows the change's single contact; another person's
 * contact is never used (their replies would go to the wrong person).
 */
function senderOf(m: z.output<typeof message>, contacts: Array<z.output<typeof contact>>) {
  const match = contacts.find((c) => (m.from_user_id && c.user_id === m.from_user_id) || (m.from && c.wa_id === m.from));
  if (match) return match;
  return !m.from && !m.from_user_id && contacts.length === 1 ? contacts[0] : undefined;
}

/** Text, a reply button or list choice (its title, which is the option's label), a template button. */
function textOf(m: z.output<typeof message>): string | null {
  if (m.type === 'text') return m.text && !isBlank(m.text.body) ? m.text.body : null; // blank: nothing to answer but politely
  if (m.type === 'interactive') return m.interactive?.button_reply?.title ?? m.interactive?.list_reply?.title ?? null;
  if (m.type === 'button') return m.button?.text ?? null;
  return null;
}

function unixSeconds(raw: string | null | undefined): Date | null {
  if (!raw || !/^\d{1,12}$/.test(raw)) return null;
  return new Date(Number(raw) * 1000);
}
