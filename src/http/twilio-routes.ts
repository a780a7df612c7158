import { isBlank } from '../core/blank.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { twilioSignatureValid } from '../channels/signatures.ts';
import { smsKeyword } from '../channels/twilio/sms-keywords.ts';
import { TWILIO_CHANNEL } from '../channels/twilio/twilio-channel.ts';
import type { Clock } from '../core/clock.ts';
import type { DeliveryStatus } from '../core/domain.ts';
import { AppError } from '../core/errors.ts';
import { canonicalPhone } from '../core/phone.ts';
import type { InboundMessage } from '../engine/inbound-message.ts';
import type { InboundService } from '../engine/inbound-service.ts';
import type { ParticipantService } from '../engine/participant-service.ts';
import type { Store } from '../store/store.ts';
import { rawBodyScope } from './raw-body.ts';
import { resource } from './resource.ts';

export const SMS_HELP_TEXT =
  'You get messages from a coaching program on this number. Reply STOP to stop them, START to receive them again.';
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
const FORM = 'application/x-www-form-urlencoded';

export interface TwilioRouteDeps {
  inbound: InboundService;
  participants: ParticipantService;
  store: Store;
  clock: Clock;
  twilio: { authToken: string; publicBaseUrl: string | undefined };
}

const STATUS_MAP: Record<string, DeliveryStatus> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  undelivered: 'failed',
  failed: 'failed',
  canceled: 'failed',
};

/**
 * Twilio Messaging webhooks, checked against `X-Twilio-Signature`. An inbound SMS is in the inbox
 * (deduplicated by MessageSid) when the empty TwiML answer leaves; the reply goes out later through
 * the REST API. STOP, START and HELP are handled here, before any turn (decision 003).
 */
export function twilioRoutes(app: FastifyInstance, deps: TwilioRouteDeps): void {
  rawBodyScope(app, [FORM], (scope) => {
    resource(scope, '/webhooks/twilio', {
      POST: {
        schema: {
          tags: ['channels'],
          summary: 'Twilio inbound SMS webhook (form-encoded, signed with X-Twilio-Signature)',
        },
        handler: async (request, reply) => {
          const params = signedParams(request, deps.twilio);
          const messageSid = required(params, 'MessageSid');
          const from = required(params, 'From');
          const sender = canonicalPhone(from) ?? from;
          const text = params.get('Body') ?? '';
          const message: InboundMessage = {
            channel: TWILIO_CHANNEL,
            replyChannel: TWILIO_CHANNEL,
            sender,
            contactId: sender,
            text,
            channelMessageId: messageSid,
          };
          if (!(await handledKeyword(deps, message))) {
            const hasMedia = Number(params.get('NumMedia') ?? '0') > 0;
            await deps.inbound.receive(
              isBlank(text) ? { ...message, unsupported: hasMedia ? 'media' : 'empty' } : message,
            );
          }
          return twiml(reply);
        },
      },
    });
    resource(scope, '/webhooks/twilio/status', {
      POST: {
        schema: { tags: ['channels'], summary: 'Twilio message status callback (signed with X-Twilio-Signature)' },
        handler: async (request, reply) => {
          const params = signedParams(request, deps.twilio);
          const messageSid = required(params, 'MessageSid');
          const reported = required(params, 'MessageStatus');
          const status = Object.hasOwn(STATUS_MAP, reported) ? STATUS_MAP[reported] : undefined;
          if (status) {
            const code = params.get('ErrorCode');
            await deps.store.recordDeliveryReceipt({
              channel: TWILIO_CHANNEL,
              providerMessageId: messageSid,
              status,
              at: deps.clock.now(),
              error: code ? `Twilio error ${code}` : null,
            });
          }
          return reply.status(204).send();
        },
      },
    });
  });
}

/**
 * STOP records the opt-out and pauses the participant; START undoes that, but only for someone
 * who opted out (otherwise "yes" is an ordinary answer); HELP gets a fixed answer. A redelivered
 * keyword changes nothing: a replayed STOP must not undo a later START.
 */
async function handledKeyword(deps: TwilioRouteDeps, message: InboundMessage): Promise<boolean> {
  const keyword = smsKeyword(message.text);
  if (keyword === null) return false;
  const now = deps.clock.now();
  if (keyword === 'start') {
    const contact = await deps.store.getContact(TWILIO_CHANNEL, message.sender);
    if (!contact?.optedOutAt) return false;
  }
  await deps.inbound.receiveCommand(message, keyword === 'help' ? SMS_HELP_TEXT : null, async (tx, participant) => {
    if (keyword === 'help') return;
    await tx.setContactOptOut(TWILIO_CHANNEL, message.sender, keyword === 'stop' ? now : null, now);
    if (participant && keyword === 'stop' && participant.status === 'active')
      await deps.participants.updateIn(tx, participant.id, { status: 'paused' });
    if (participant && keyword === 'start' && participant.status === 'paused')
      await deps.participants.updateIn(tx, participant.id, { status: 'active' });
  });
  return true;
}

/** The form parameters, after checking Twilio's signature over the URL it called and those parameters. */
function signedParams(request: FastifyRequest, twilio: TwilioRouteDeps['twilio']): URLSearchParams {
  const raw = request.body;
  if (!Buffer.isBuffer(raw))
    throw new AppError('unsupported_media_type', `content-type: must be ${FORM}`, { field: 'content-type' });
  const params = new URLSearchParams(raw.toString('utf8'));
  const url = `${twilio.publicBaseUrl ?? `${request.protocol}://${request.host}`}${request.url}`;
  if (
    !twilioSignatureValid(
      twilio.authToken,
      url,
      [...params.entries()],
      request.headers['x-twilio-signature'] as string | undefined,
    )
  ) {
    throw new AppError(
      'invalid_signature',
      `x-twilio-signature: missing or not valid for ${url} and these parameters ` +
        '(set PUBLIC_BASE_URL to the URL Twilio calls)',
      { field: 'x-twilio-signature' },
    );
  }
  return params;
}

function required(params: URLSearchParams, name: string): string {
  const value = params.get(name);
  if (!value) throw new AppError('invalid_request', `${name}: is required`, { field: name });
  return value;
}

function twiml(reply: FastifyReply) {
  return reply.type('text/xml').send(EMPTY_TWIML);
}
