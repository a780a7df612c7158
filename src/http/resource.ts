import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods } from 'fastify';
import { AppError } from '../core/errors.ts';
import type { Scope } from './signed-token.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
const METHODS: Method[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

export interface ResourceHandler {
  schema?: FastifySchema;
  /** The scopes a client token needs here; unset: only the API token (decision 010). */
  clientScopes?: readonly Scope[];
  /** The body may hold U+0000 (a chat client's history): the handler replaces it where it reads text. */
  keepsNul?: boolean;
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

/**
 * Registers the handlers of one URL, and answers every other method with 405 and an `Allow`
 * header listing the ones that exist.
 */
export function resource(app: FastifyInstance, url: string, handlers: Partial<Record<Method, ResourceHandler>>): void {
  const allowed = METHODS.filter((method) => handlers[method]);
  for (const method of allowed) {
    const { schema, handler, clientScopes, keepsNul } = handlers[method]!;
    const config = { ...(clientScopes ? { clientScopes } : {}), ...(keepsNul ? { keepsNul } : {}) };
    app.route({ method, url, schema, handler, config });
  }
  const others = METHODS.filter((method) => !handlers[method]) as HTTPMethods[];
  if (others.length === 0) return;
  app.route({
    method: others,
    url,
    schema: { hide: true },
    config: { methodNotAllowed: true },
    handler: async (request, reply) => {
      void reply.header('allow', allowed.join(', '));
      throw new AppError(
        'method_not_allowed',
        `${request.method} is not allowed on ${url}; use ${allowed.join(', ')}`,
        { field: 'method' },
      );
    },
  });
}
