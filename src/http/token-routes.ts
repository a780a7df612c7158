import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../core/errors.ts';
import { principalOf } from './auth.ts';
import { parseRequest } from './http-errors.ts';
import { jsonSchema } from './participant-schemas.ts';
import { ok } from './participant-routes.ts';
import { resource } from './resource.ts';
import { conversationById, type SessionRouteDeps } from './session-routes.ts';
import { SCOPES, type TokenSigner } from './signed-token.ts';
import { TICKET_TTL_MS, type TicketBook } from './tickets.ts';

export interface TokenRouteDeps extends Pick<SessionRouteDeps, 'store' | 'participants'> {
  tickets: TicketBook;
  signer: TokenSigner;
}

/** How long a client token lives unless asked otherwise, and at most, in seconds. */
export const CLIENT_TOKEN_TTL_S = 3600;
export const MAX_CLIENT_TOKEN_TTL_S = 86_400;

const tags = ['access'];
/** The id the ticket's stream will be opened with (a conversation id, or a participant id standing for it). */
const ticketBody = z.strictObject({ conversation_id: z.string().min(1).max(200).optional() });
const tokenBody = z.strictObject({
  conversation_id: z.string().min(1).max(200),
  scopes: z
    .array(z.enum(SCOPES))
    .min(1)
    .refine((scopes) => new Set(scopes).size === scopes.length, 'must not name a scope twice'),
  expires_in: z.number().int().min(1).max(MAX_CLIENT_TOKEN_TTL_S).optional(),
});

export function tokenRoutes(app: FastifyInstance, deps: TokenRouteDeps): void {
  resource(app, '/api/tickets', {
    POST: {
      // A browser holding a client token asks for tickets to open its stream.
      clientScopes: ['read'],
      schema: {
        tags,
        body: jsonSchema(ticketBody),
        summary:
          `A single-use ticket (valid ${TICKET_TTL_MS / 1000} s, on any process) ` +
          "for opening a conversation's WebSocket or event stream from a browser; " +
          `{"conversation_id"} limits it to that one (a client token's ticket is always limited to its conversation)`,
      },
      handler: async (request) => {
        const { conversation_id: asked } = parseRequest(ticketBody, request.body ?? {}, 'body');
        const principal = principalOf(request);
        let scope = asked ?? null;
        if (principal.kind === 'client') {
          if (asked !== undefined && asked !== principal.conversationId) {
            throw new AppError('forbidden', `this client token is for conversation "${principal.conversationId}"`, {
              field: 'conversation_id',
            });
          }
          scope = principal.conversationId;
        }
        const { ticket, expiresAt } = deps.tickets.issue(scope);
        return ok(undefined, { ticket, expires_at: expiresAt.toISOString() });
      },
    },
  });

  resource(app, '/api/tokens', {
    POST: {
      schema: {
        tags,
        body: jsonSchema(tokenBody),
        summary:
          'A client token for one conversation (API token only): "read" opens its stream, "write" posts its ' +
          'messages; nothing else',
        description:
          "Minted by the operator's backend for a browser. " +
          `\`expires_in\` in seconds (default ${CLIENT_TOKEN_TTL_S}, at most ${MAX_CLIENT_TOKEN_TTL_S}). ` +
          'Valid on every process that shares the signing key; it cannot be revoked before it expires. A ' +
          'participant id is accepted and resolved to its conversation; the token names the conversation id, ' +
          'which paths must then use.',
      },
      handler: async (request) => {
        const body = parseRequest(tokenBody, request.body, 'body');
        const conversation = await conversationById(deps, body.conversation_id, 'conversation_id');
        const exp = deps.signer.now() + (body.expires_in ?? CLIENT_TOKEN_TTL_S) * 1000;
        const scopes = SCOPES.filter((scope) => body.scopes.includes(scope));
        const { token } = deps.signer.sign({ kind: 'client', conversation: conversation.id, scopes, exp });
        return ok(undefined, {
          token,
          conversation_id: conversation.id,
          scopes,
          expires_at: new Date(exp).toISOString(),
        });
      },
    },
  });
}
