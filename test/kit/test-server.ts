import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { startServer, type RunningServer, type ServerOverrides } from '../../src/server.ts';
import { ChannelSink } from './channel-sink.ts';
import { waitFor } from './wait-for.ts';

export interface TestServer extends RunningServer {
  sink: ChannelSink;
  /** fetch() against the server, JSON in and out. */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

/** A temporary SQLite file, so tests exercise the same WAL file store as production. */
export function tempSqliteUrl(): string {
  return `sqlite:${join(mkdtempSync(join(tmpdir(), 'promptpipe-')), 'test.sqlite')}`;
}

/**
 * Starts the real server in-process on a free loopback port, with a channel sink and whatever
 * overrides the test gives (a scripted model, a clock). With `OUTBOUND_WEBHOOK_URL` in `env` the
 * real webhook channel posts there instead (and the channel sink stays empty).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  overrides: ServerOverrides = {},
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
  const request: TestServer['request'] = async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${server.url}${path}`, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON; keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  return { ...server, sink, request };
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
