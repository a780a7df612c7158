import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors.ts';

/**
 * Browser apps on other origins (`CORS_ORIGINS`): CORS for the HTTP API, and the same list for
 * WebSocket upgrades, which browsers send cross-origin without asking (the Origin header is the
 * only guard). Same-origin pages (the console) and clients without an Origin (servers, the CLI)
 * are unaffected. Registered before authentication: a preflight carries no token.
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  const allowed = new Set(origins);
  if (allowed.size > 0) {
    await app.register(cors, {
      origin: [...allowed],
      methods: ['GET', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'last-event-id', 'idempotency-key'],
      exposedHeaders: ['retry-after', 'link'],
      maxAge: 600,
    });
  }
  app.addHook('onRequest', async (request) => {
    if (request.headers.upgrade?.toLowerCase() !== 'websocket') return;
    const origin = request.headers.origin;
    if (origin === undefined || allowed.has(origin) || isSameOrigin(origin, request.headers.host)) return;
    throw new AppError('forbidden', `origin: ${origin} may not open a WebSocket here (CORS_ORIGINS)`, {
      field: 'origin',
    });
  });
}

function isSameOrigin(origin: string, host: string | undefined): boolean {
  return host !== undefined && URL.parse(origin)?.host === host;
}
