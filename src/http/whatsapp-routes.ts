import type { FastifyInstance } from 'fastify';
import { safeEqual, whatsappSignatureValid } from '../channels/signatures.ts';
import { TEMPLATE_RESEND, WHATSAPP_CHANNEL, WINDOW_CLOSED } from '../channels/whatsapp/whatsapp-channel.ts';
import type { WhatsAppInbound, WhatsAppWebhook } from '../channels/whatsapp/whatsapp-webhook.ts';
import type { Clock } from '../core/clock.ts';
import { AppError } from '../core/errors.ts';
import { phoneFromWhatsAppId } from '../core/phone.ts';
import type { Engine } from '../engine/engine.ts';
import type { InboundMessage } from '../engine/inbound-message.ts';
import type { InboundService } from '../engine/inbound-service.ts';
import type { Store } from '../store/store.ts';
import { rawBodyScope } from './raw-body.ts';
import { resource } from './resource.ts';
import { readWhatsAppBody } from './whatsapp-body.ts';

export interface WhatsAppRouteDeps {
  inbound: InboundService;
  engine: Pick<Engine, 'notify'>;
  store: Store;
  clock: Clock;
  whatsapp: { appSecret: string; verifyToken: string; phoneNumberId: string };
}

/**
 * The WhatsApp Cloud API webhook. POSTs are checked against `X-Hub-Signature-256` over the raw
 * bytes before anything is read; every message is in the inbox (deduplicated by its wamid) when
 * the 200 leaves, and statuses become delivery receipts.
 */
export function whatsappRoutes(app: FastifyInstance, deps: WhatsAppRouteDeps): void {
  rawBodyScope(app, ['application/json'], (scope) => {
    resource(scope, '/webhooks/whatsapp', {
      GET: {
        schema: {
          tags: ['channels'],
          summary: 'WhatsApp webhook verification handshake (hub.mode, hub.verify_token, hub.challenge)',
        },
        handler: async (request, reply) => {
          const query = request.query as Record<string, unknown>;
          const challenge = query['hub.challenge'];
          const token = query['hub.verify_token'];
          if (
            query['hub.mode'] !== 'subscribe' ||
            typeof token !== 'string' ||
            !safeEqual(token, deps.whatsapp.verifyToken)
          ) {
            throw new AppError(
              'forbidden',
              'hub.verify_token: does not match WHATSAPP_VERIFY_TOKEN (or hub.mode is not "subscribe")',
              { field: 'hub.verify_token' },
            );
          }
          if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 200) {
            throw new AppError('invalid_request', 'hub.challenge: is required (1-200 characters)', {
              field: 'hub.challenge',
            });
          }
          return reply.type('text/plain').send(challenge);
        },
      },
      POST: {
        schema: {
          tags: ['channels'],
          summary: 'WhatsApp Cloud API webhook (messages and statuses), signed with X-Hub-Signature-256',
        },
        handler: async (request, reply) => {
          const raw = request.body;
          if (
            !Buffer.isBuffer(raw) ||
            !whatsappSignatureValid(
              deps.whatsapp.appSecret,
              raw,
              request.headers['x-hub-signature-256'] as string | undefined,
            )
          ) {
            throw new AppError(
              'invalid_signature',
              'x-hub-signature-256: missing or not the HMAC-SHA256 of the body with the app secret',
              { field: 'x-hub-signature-256' },
            );
          }
          let accepted = 0;
          let statuses = 0;
          // Meta batches up to 3 MB (thousands of messages): parsed off the event loop, then read
          // and stored a part at a time, one transaction each, yielding between parts so the server
          // keeps answering meanwhile. Every part is stored before the 200; after a crash half-way,
          // Meta's retry finds the parts already stored as duplicates (message ids are global).
          for await (const part of readWhatsAppBody(raw, WEBHOOK_PART_SIZE)) {
            if (part.skipped.length > 0)
              request.log.warn({ skipped: part.skipped }, 'parts of a WhatsApp webhook were not understood');
            accepted += await storeMessages(deps, part.messages);
            statuses += part.receipts.length;
            await storeReceipts(deps, part.receipts);
            await yieldToEventLoop();
          }
          return reply.send({ status: 'ok', messages: accepted, statuses });
        },
      },
    });
  });
}

/** Messages and statuses per part of a webhook: each part is one transaction, and a few milliseconds of work. */
export const WEBHOOK_PART_SIZE = 25;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One part's messages for this phone number, in one transaction; how many were taken. */
async function storeMessages(deps: WhatsAppRouteDeps, messages: WhatsAppInbound[]): Promise<number> {
  const inbound = messages.flatMap((message) => {
    // Another number of the account.
    if (message.phoneNumberId && message.phoneNumberId !== deps.whatsapp.phoneNumberId) return [];
    return toInbound(message) ?? [];
  });
  if (inbound.length > 0) await deps.inbound.receiveBatch(inbound);
  return inbound.length;
}

/** One part's statuses, in one transaction; then the template resends they call for. */
async function storeReceipts(deps: WhatsAppRouteDeps, receipts: WhatsAppWebhook['receipts']): Promise<void> {
  if (receipts.length === 0) return;
  const resend = await deps.store.transaction(async (tx) => {
    const outboxIds: string[] = [];
    for (const { errorCode, ...receipt } of receipts) {
      const recorded = await tx.recordDeliveryReceipt({
        channel: WHATSAPP_CHANNEL,
        ...receipt,
        at: receipt.at ?? deps.clock.now(),
      });
      // Also for a repeated receipt: Meta retries when our first answer failed half-way.
      if (errorCode === WINDOW_CLOSED && recorded.outboxId) outboxIds.push(recorded.outboxId);
    }
    return outboxIds;
  });
  for (const outboxId of resend) await resendAsTemplate(deps, outboxId);
}

/**
 * Meta accepted a free-form message, then reported that the 24-hour window was closed: the
 * message goes out again as the template, once (the copy's id is fixed; a second insert of it,
 * by a repeated receipt or another process, finds it there).
 */
async function resendAsTemplate(deps: WhatsAppRouteDeps, outboxId: string): Promise<void> {
  const item = await deps.store.getOutbox(outboxId);
  if (!item || item.idempotencyKey.endsWith(TEMPLATE_RESEND)) return;
  const copyId = `${item.id}${TEMPLATE_RESEND}`;
  if (await deps.store.getOutbox(copyId)) return;
  const now = deps.clock.now();
  const { conversationId, participantId, channel, recipient, kind, text, poll, idempotencyKey } = item;
  try {
    await deps.store.enqueueOutbox([
      {
        id: copyId,
        conversationId,
        participantId,
        channel,
        recipient,
        kind,
        text,
        poll,
        idempotencyKey: `${idempotencyKey}${TEMPLATE_RESEND}`,
        nextAttemptAt: now,
        createdAt: now,
      },
    ]);
  } catch (error) {
    if (!(await deps.store.getOutbox(copyId))) throw error; // not a concurrent insert of the same copy
  }
  deps.engine.notify(conversationId);
}

/** Contacts key by the business-scoped user id when there is one, else `wa_id` (decision 003). */
function toInbound(message: WhatsAppInbound): InboundMessage | null {
  const phone = message.waId ? phoneFromWhatsAppId(message.waId) : null;
  const contactId = message.userId ?? message.waId;
  if (!contactId) return null;
  return {
    channel: WHATSAPP_CHANNEL,
    replyChannel: WHATSAPP_CHANNEL,
    sender: phone ?? contactId,
    contactId,
    text: message.text ?? '',
    channelMessageId: message.messageId,
    ...(message.sentAt ? { sentAt: message.sentAt } : {}),
    ...(message.text === null ? { unsupported: message.type } : {}),
  };
}
