import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../observability/metrics.ts';
import { resource } from './resource.ts';

/** `GET /metrics` in the Prometheus text format, and every request counted by its route template. */
export function metricsRoute(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    // The template (`/api/conversations/:id`), never the raw URL: ids would make a series each.
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  resource(app, '/metrics', {
    GET: {
      schema: {
        tags: ['server'],
        summary: 'Prometheus metrics: turns, model calls, tool calls, deliveries, HTTP requests, backlogs, process',
      },
      handler: async (_request, reply) =>
        reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    },
  });
}
