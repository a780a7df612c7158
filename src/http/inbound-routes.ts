import type { FastifyInstance } from 'fastify';
import type { InboundService } from '../engine/inbound-service.ts';
import { parseRequest } from './http-errors.ts';
import { inboundBody, jsonSchema } from './participant-schemas.ts';
import { ok, requirePhone } from './participant-routes.ts';
import { resource } from './resource.ts';

/**
 * The generic HTTP channel: the message is in the inbox (deduplicated by `message_id`) when the
 * 202 leaves, before any model call.
 */
export function inboundRoutes(app: FastifyInstance, deps: { inbound: InboundService }): void {
  resource(app, '/conversation/inbound', {
    POST: {
      schema: { tags: ['messages'], summary: 'Receive a message from a participant (generic HTTP channel)', body: jsonSchema(inboundBody) },
      handler: async (request, reply) => {
        const body = parseRequest(inboundBody, request.body, 'body');
        const sender = requirePhone(body.from, 'from');
        const outcome = await deps.inbound.receive({ channel: 'http', sender, text: body.text, channelMessageId: body.message_id ?? null });
        const result =
          outcome.status === 'queued'
            ? { inbox_id: outcome.inboxId, participant_id: outcome.participantId, duplicate: outcome.duplicate, status: 'queued' }
            : { inbox_id: outcome.inboxId, duplicate: outcome.duplicate, status: 'unknown_sender' };
        return reply.status(202).send(ok(outcome.duplicate ? 'Already received' : 'Accepted', result));
      },
    },
  });
}
