import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors.ts';
import { CONSOLE_PUBLIC_PATHS } from './console-routes.ts';

/** The console's static files are public (they hold no data); everything they fetch is not. */
const PUBLIC_PATHS = new Set(['/health', '/openapi.json', ...CONSOLE_PUBLIC_PATHS]);

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time check of a bearer token (hashing first makes the lengths equal). */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The conversation id in the path of its WebSocket or event stream, which browsers open without headers. */
function streamedConversation(method: string, path: string): string | undefined {
  const match = method === 'GET' ? /^\/api\/conversations\/([^/]+)\/(?:socket|stream)$/.exec(path) : null;
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined; // a bad escape: the route answers it
  }
}

/**
 * Requires `Authorization: Bearer <API_TOKEN>` on every route but the public ones. A WebSocket
 * upgrade or an event stream may present a single-use `?ticket=` instead (browsers cannot set the
 * header on either). An `EventSource` that reconnects on its own needs a new ticket.
 */
export function registerBearerAuth(app: FastifyInstance, token: string, redeemTicket: (ticket: string, conversationId: string) => boolean): void {
  const expected = token;
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    // Providers' webhooks carry their own signatures instead.
    if (PUBLIC_PATHS.has(path) || path.startsWith('/webhooks/')) return;
    const ticket = (request.query as Record<string, unknown> | undefined)?.ticket;
    const streamed = streamedConversation(request.method, path);
    if (typeof ticket === 'string' && streamed !== undefined && redeemTicket(ticket, streamed)) return;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match?.[1] || !tokenMatches(match[1].trim(), expected)) {
      throw new AppError('unauthorized', 'a valid bearer token is required (Authorization: Bearer <API_TOKEN>)', { field: 'authorization' });
    }
  });
}
