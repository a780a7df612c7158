import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors.ts';
import type { InboundResult } from '../engine/inbound-message.ts';
import type { InboundService } from '../engine/inbound-service.ts';
import { parseRequest } from './http-errors.ts';
import { inboundBody, jsonSchema } from './participant-schemas.ts';
import type { PhoneRegion } from '../core/phone.ts';
import { ok, requirePhone } from './participant-routes.ts';
import { resource } from './resource.ts';

/**
 * A client that sends another text under a `message_id` it used before would never hear back
 * about it (the message counts as received): say so instead.
 */
export function refuseReusedMessageId(outcome: InboundResult, messageId: string | null | undefined): void {
  if (outcome.differentText) {
    throw new AppError(
      'message_id_reused',
      `message_id "${messageId}" was already used for a different text; use a new id for a new message`,
      { field: 'message_id' },
    );
  }
}

/**
 * The generic HTTP channel: the message is in the inbox (deduplicated by `message_id`) when the
 * 202 leaves, before any model call.
 */
export function inboundRoutes(
  app: FastifyInstance,
  deps: { inbound: InboundService; phoneRegion?: PhoneRegion | undefined },
): void {
  resource(app, '/conversation/inbound', {
    POST: {
      schema: {
        tags: ['messages'],
        summary: 'Receive a message from a participant (generic HTTP channel)',
        body: jsonSchema(inboundBody),
      },
      handler: async (request, reply) => {
        const body = parseRequest(inboundBody, request.body, 'body');
        const sender = requirePhone(body.from, 'from', deps.phoneRegion);
        const outcome = await deps.inbound.receive({
          channel: 'http',
          sender,
          text: body.text,
          channelMessageId: body.message_id ?? null,
        });
        refuseReusedMessageId(outcome, body.message_id);
        if (outcome.status !== 'queued') {
          const result = { inbox_id: outcome.inboxId, duplicate: outcome.duplicate, status: 'unknown_sender' };
          return reply.status(202).send(ok(outcome.duplicate ? 'Already received' : 'Accepted', result));
        }
        const result = {
          inbox_id: outcome.inboxId,
          participant_id: outcome.participantId,
          duplicate: outcome.duplicate,
          // A paused participant's message is kept in their transcript; no reply comes.
          status: outcome.answered ? 'queued' : 'recorded',
        };
        const message = outcome.duplicate
          ? 'Already received'
          : outcome.answered
            ? 'Accepted'
            : 'Recorded; the participant is not active, so no reply is sent';
        return reply.status(202).send(ok(message, result));
      },
    },
  });
}
