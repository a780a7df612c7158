import type { FastifyInstance } from 'fastify';

/**
 * Providers batch webhooks (Meta: "payloads can be up to 3MB"); one refused with 413 is retried
 * for days and everything in it is lost, so their routes take more than MAX_BODY_BYTES.
 */
const PROVIDER_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * Registers routes in a scope where bodies of the given content types arrive as the raw bytes
 * (a Buffer): signatures are computed over exactly what the provider sent.
 */
export function rawBodyScope(
  app: FastifyInstance,
  contentTypes: string[],
  routes: (scope: FastifyInstance) => void,
): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    const bodyLimit = Math.max(PROVIDER_BODY_LIMIT, app.initialConfig.bodyLimit ?? 0);
    scope.addContentTypeParser(contentTypes, { parseAs: 'buffer', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    routes(scope);
  });
}
