import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the OTLP/HTTP JSON encoding carries it, its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  status: { code?: number; message?: string };
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  scope: string;
}

/**
 * A local OTLP/HTTP receiver on 127.0.0.1: accepts `POST /v1/traces` with a JSON
 * `ExportTraceServiceRequest` (what an OpenTelemetry Collector accepts on :4318) and keeps every
 * span. Anything else is a 404, a body that is not that JSON a 400, so an exporter that sent
 * something else would show as spans missing.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: Array<{ path: string; contentType: string | undefined; headers: Record<string, unknown> }> = [];
  #server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.requests.push({
          path: request.url ?? '',
          contentType: request.headers['content-type'],
          headers: request.headers,
        });
        if (request.method !== 'POST' || request.url !== '/v1/traces') {
          response.writeHead(404).end();
          return;
        }
        try {
          this.#accept(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          response.writeHead(400).end();
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    this.#server?.closeAllConnections();
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  #accept(body: { resourceSpans: any[] }): void {
    if (!Array.isArray(body.resourceSpans)) throw new Error('not an ExportTraceServiceRequest');
    for (const resourceSpans of body.resourceSpans) {
      const resource = flatten(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? [])
        for (const span of scopeSpans.spans ?? [])
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            status: span.status ?? {},
            attributes: flatten(span.attributes),
            resource,
            scope: scopeSpans.scope?.name,
          });
    }
  }
}

/** OTLP `KeyValue[]` → a plain object (`intValue` arrives as a string in JSON; it becomes a number). */
function flatten(attributes: Array<{ key: string; value: any }> | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

function valueOf(value: any): unknown {
  if (value === undefined || value === null) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(valueOf);
  return value;
}
