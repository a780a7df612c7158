import type { FastifyInstance } from 'fastify';

/**
 * Registers routes in a scope where bodies of the given content types arrive as the raw bytes
 * (a Buffer): signatures are computed over exactly what the provider sent.
 */
export function rawBodyScope(app: FastifyInstance, contentTypes: string[], routes: (scope: FastifyInstance) => void): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(contentTypes, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    routes(scope);
  });
}
