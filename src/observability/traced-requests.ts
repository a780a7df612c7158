import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Tracing } from './tracing.ts';

/**
 * A SERVER span per inbound request (decision 021), continuing the caller's trace when it sends a
 * W3C `traceparent` header (a provider webhook through a traced proxy, a traced client). Must be
 * registered before any other hook: everything the request runs (hooks, handler, the work it
 * queues, such as the turn its message starts) happens inside the span's context. Only the path
 * is recorded, never the query (it may carry a ticket) or a body.
 */
export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  app.addHook('onRequest', (request, reply, done) => {
    const parent = tracing.extract(request.headers);
    const span = tracing.tracer.startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': request.url.split('?')[0]!,
          'url.scheme': request.protocol,
          'network.protocol.version': request.raw.httpVersion,
        },
      },
      parent,
    );
    // Fires for every request, the hijacked ones too (streams, WebSocket upgrades) when they close.
    reply.raw.once('close', () => finish(span, request, reply));
    context.with(trace.setSpan(parent, span), done);
  });
}

function finish(span: Span, request: FastifyRequest, reply: FastifyReply): void {
  const route = request.routeOptions.url;
  const status = reply.raw.statusCode;
  if (route) {
    span.updateName(`${request.method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
