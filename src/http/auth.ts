import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.ts';
import { CONSOLE_PUBLIC_PATHS } from './console-routes.ts';
import { clientKey, type FailureLimiter } from './failure-limiter.ts';
import { TOKEN_PREFIX, type Scope, type TokenSigner } from './signed-token.ts';
import type { TicketBook } from './tickets.ts';

/**
 * Who a request acts for. `admin`: the API token (or no auth is configured); `client`: a
 * per-conversation client token (`POST /api/tokens`); `ticket`: a single-use stream ticket.
 */
export type Principal =
  | { kind: 'admin' }
  | { kind: 'client'; conversationId: string; scopes: readonly Scope[] }
  | { kind: 'ticket'; conversationId: string };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every non-public route; null when no API token is configured. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The scopes a client token needs on this route (unset: client tokens are refused). */
    clientScopes?: readonly Scope[];
    /** The 405 answer of a path's other methods (`resource`): not an operation of its own. */
    methodNotAllowed?: boolean;
    /** A JSON body may hold U+0000: the route replaces it where it reads text (decision 023). */
    keepsNul?: boolean;
  }
}

const ADMIN: Principal = { kind: 'admin' };

/** Who the request acts for: with no API token configured, everyone is the operator. */
export function principalOf(request: FastifyRequest): Principal {
  return request.principal ?? ADMIN;
}

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

export interface AuthOptions {
  /** The operator's token: everything. */
  token: string;
  /** Verifies client tokens. */
  signer: TokenSigner;
  tickets: TicketBook;
  /** Failed authentications per client address; undefined = no limit. */
  failures: FailureLimiter | undefined;
  /** Paths anyone may read besides /health and /openapi.json (`/metrics` with METRICS_PUBLIC). */
  publicPaths?: readonly string[];
}

/**
 * Requires `Authorization: Bearer <API_TOKEN>`, or a client token on the routes that declare
 * `clientScopes`, on every route but the public ones. A WebSocket upgrade or an event stream may
 * present a single-use `?ticket=` instead (browsers cannot set the header on either); an
 * `EventSource` that reconnects on its own needs a new ticket. An address with too many failures
 * gets 429 for everything until its window ends, so a right guess cannot be told from a wrong one.
 */
export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // Providers' webhooks carry their own signatures instead.
    if (PUBLIC_PATHS.has(path) || options.publicPaths?.includes(path) || path.startsWith('/webhooks/')) return;
    const client = clientKey(request.ip);
    refuseIfBlocked(options.failures, client, reply);
    const principal = authenticate(request, path, options);
    if (!principal) {
      options.failures?.record(client);
      throw refusal(request, path, options.tickets);
    }
    if (principal.kind === 'client') authorize(request, principal);
    request.principal = principal;
  });
}

/** Why a request is refused: its ticket's problem when it came with a ticket alone, else the token's. */
function refusal(request: FastifyRequest, path: string, tickets: TicketBook): AppError {
  const ticket = (request.query as Record<string, unknown> | undefined)?.ticket;
  const streamed = streamedConversation(request.method, path);
  const problem = typeof ticket === 'string' && streamed !== undefined && !request.headers.authorization;
  const why = problem ? tickets.problem(ticket, streamed) : undefined;
  if (why)
    return new AppError('unauthorized', `the ticket ${why}: ask POST /api/tickets for a new one`, { field: 'ticket' });
  return new AppError(
    'unauthorized',
    'a valid bearer token is required (Authorization: Bearer <API_TOKEN> or a client token)',
    { field: 'authorization' },
  );
}

function refuseIfBlocked(failures: FailureLimiter | undefined, client: string, reply: FastifyReply): void {
  const waitMs = failures?.blockedFor(client) ?? 0;
  if (waitMs <= 0) return;
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  void reply.header('retry-after', String(seconds));
  throw new AppError('rate_limited', `too many failed authentications from this address; retry in ${seconds} s`, {
    field: 'authorization',
  });
}

/** The principal the request's credentials stand for; undefined for none or a wrong one. */
function authenticate(request: FastifyRequest, path: string, options: AuthOptions): Principal | undefined {
  const ticket = (request.query as Record<string, unknown> | undefined)?.ticket;
  const streamed = streamedConversation(request.method, path);
  if (typeof ticket === 'string' && streamed !== undefined && options.tickets.redeem(ticket, streamed))
    return { kind: 'ticket', conversationId: streamed };
  const presented = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim();
  if (!presented) return undefined;
  if (tokenMatches(presented, options.token)) return ADMIN;
  if (!presented.startsWith(TOKEN_PREFIX)) return undefined;
  const verified = options.signer.verify(presented);
  if (verified.status === 'invalid' || verified.claims.kind !== 'client' || verified.claims.conversation === null)
    return undefined;
  // Genuine but old: its own code (not counted as a failure), so the client knows to ask for a new one.
  if (verified.status === 'expired')
    throw new AppError('token_expired', 'the client token has expired; ask for a new one', { field: 'authorization' });
  return { kind: 'client', conversationId: verified.claims.conversation, scopes: verified.claims.scopes };
}

/** A client token may use only the routes that declare its scopes, and only for its conversation. */
function authorize(request: FastifyRequest, principal: Extract<Principal, { kind: 'client' }>): void {
  const needed = request.routeOptions.config?.clientScopes;
  if (!needed)
    throw new AppError(
      'forbidden',
      "a client token opens only its conversation's stream and messages; this route needs the API token",
      { field: 'authorization' },
    );
  const missing = needed.filter((scope) => !principal.scopes.includes(scope));
  if (missing.length > 0)
    throw new AppError(
      'forbidden',
      `this client token lacks the ${missing.map((scope) => `"${scope}"`).join(' and ')} scope`,
      { field: 'authorization' },
    );
  const id = (request.params as { id?: unknown } | undefined)?.id;
  if (id !== undefined && id !== principal.conversationId) {
    throw new AppError(
      'forbidden',
      `this client token is for conversation "${principal.conversationId}" (use that id in the path)`,
      { field: 'id' },
    );
  }
}
