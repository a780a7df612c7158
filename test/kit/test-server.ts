import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { startServer, type RunningServer, type ServerOverrides } from '../../src/server.ts';
import { ChannelSink } from './channel-sink.ts';
import { waitFor } from './wait-for.ts';

export interface TestServer extends RunningServer {
  sink: ChannelSink;
  /**
   * A request to the server, JSON in and out: in-process (`fetch` below) unless the server was
   * started with `{ socket: true }`.
   */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * `fetch(url + path, init)` without the socket: through Fastify's `inject()`, the same routes,
   * hooks and error handling, answered as a fetch `Response` (bytes, headers and all). Streams
   * (SSE), WebSockets and whatever must cross a real connection use `url` instead.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** A temporary SQLite file, so tests exercise the same WAL file store as production. */
export function tempSqliteUrl(): string {
  return `sqlite:${join(mkdtempSync(join(tmpdir(), 'promptpipe-')), 'test.sqlite')}`;
}

export interface TestServerOptions {
  /**
   * `request()` goes over a loopback socket (fetch) instead of in-process: for a test whose point
   * is the connection itself. The server listens on `url` either way.
   */
  socket?: boolean;
}

/**
 * Starts the real server in-process on a free loopback port, with a channel sink and whatever
 * overrides the test gives (a scripted model, a clock). With `OUTBOUND_WEBHOOK_URL` in `env` the
 * real webhook channel posts there instead (and the channel sink stays empty).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  overrides: ServerOverrides = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  // Rate limits off unless a test turns them on: tests send bursts on purpose.
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: tempSqliteUrl(),
    LOG_LEVEL: 'silent',
    RATE_LIMITS: 'off',
    ...env,
  });
  const sink = overrides.channel instanceof ChannelSink ? overrides.channel : new ChannelSink();
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const server = await startServer(config, logger, {
    ...overrides,
    channel: env.OUTBOUND_WEBHOOK_URL ? undefined : sink,
  });
  const inProcess: TestServer['fetch'] = (path, init) => injected(server.app, server.url, path, init);
  const request: TestServer['request'] = async (method, path, body, headers = {}) => {
    const init: RequestInit & { headers: Record<string, string> } = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      init.headers['content-type'] ??= 'application/json';
    }
    const response = options.socket ? await fetch(`${server.url}${path}`, init) : await inProcess(path, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON; keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  return { ...server, sink, request, fetch: inProcess };
}

/** Statuses whose `Response` may have no body. */
const BODILESS = new Set([101, 204, 205, 304]);

/**
 * One request through `app.inject()`, in and out as fetch has it. The Host header is the
 * server's own address, as over the socket (a Twilio signature covers the URL).
 */
async function injected(app: FastifyInstance, url: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers: Record<string, string> = { host: new URL(url).host };
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  const body = init.body;
  if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array))
    throw new TypeError('the in-process fetch takes a string or bytes for a body');
  const response = await app.inject({
    method: (init.method ?? 'GET') as 'GET',
    url: path,
    headers,
    ...(body !== undefined && body !== null ? { payload: Buffer.from(body) } : {}),
  });
  // The same `Headers` a fetch() answer has: case-insensitive get(), repeated headers joined.
  const received = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) received.append(name, String(one));
  }
  // An answer read off a socket arrives on a later turn of the event loop than the one it left
  // on; one turn here too, so what the server starts "once the answer has left" (a message's turn,
  // `processInboxSoon`) has started before the test goes on, as over a connection.
  await new Promise((resolve) => setImmediate(resolve));
  return new Response(BODILESS.has(response.statusCode) ? null : response.rawPayload, {
    status: response.statusCode,
    headers: received,
  });
}

/** Sends `text` from `phone` over the generic HTTP channel and waits for the reply; returns the texts sent back. */
export async function sayAndWait(server: TestServer, phone: string, text: string): Promise<string[]> {
  const before = server.sink.to(phone).length;
  await server.request('POST', '/conversation/inbound', { from: phone, text });
  await server.engine.idle();
  await waitFor(() => server.sink.to(phone).length > before, { what: `reply to "${text}"` });
  return server.sink
    .to(phone)
    .slice(before)
    .map((message) => message.text);
}
