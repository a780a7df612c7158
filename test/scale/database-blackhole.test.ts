// @requires postgres
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildServer } from '../kit/child-server.ts';
import { lastUserText, startFakeOpenAiServer, type FakeOpenAiServer } from '../kit/fake-openai-server.ts';
import { TcpProxy } from '../kit/tcp-proxy.ts';
import { waitFor } from '../kit/wait-for.ts';
import { WebhookSink } from '../kit/webhook-sink.ts';
import { PG_URL } from '../kit/requirements.ts';

// The network to PostgreSQL drops packets instead of refusing them (a TCP proxy that holds every
// byte and keeps every connection open) under a real server process with turns in flight:
// the server must still answer (503, quickly), exit on SIGTERM, and, once the network is back,
// answer every acknowledged message in order. The short timeouts are the test's; the defaults
// are longer.
const PG = new URL(PG_URL);
const SCHEMA = `blackhole_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const PHONE = '+14165550188';
const MESSAGES = 10;
/** Far above what the configured timeouts allow, far below the hang the test guards against. */
const ANSWER_WITHIN_MS = 15_000;

let proxy: TcpProxy;
let model: FakeOpenAiServer;
let sink: WebhookSink;
let server: ChildServer;
/** The model answers messages only once the test opens this gate. */
let openGate: () => void = () => undefined;
const gate = new Promise<void>((resolve) => (openGate = resolve));

beforeAll(async () => {
  proxy = await new TcpProxy({ host: PG.hostname, port: Number(PG.port || 5432) }).up();
  model = await startFakeOpenAiServer(async (body) => {
    const text = lastUserText(body);
    if (text.startsWith('m')) await gate;
    return { text: `echo: ${text}` };
  });
  sink = await new WebhookSink().start();
  const url = new URL(PG);
  url.port = String(proxy.port);
  server = await ChildServer.start({
    DATABASE_URL: url.href,
    DATABASE_SCHEMA: SCHEMA,
    DATABASE_CONNECT_TIMEOUT_MS: '1000',
    DATABASE_QUERY_TIMEOUT_MS: '1000',
    SHUTDOWN_TIMEOUT_MS: '1000',
    LLM_BASE_URL: model.baseUrl,
    LLM_MAX_RETRIES: '0',
    OUTBOUND_WEBHOOK_URL: sink.url,
  });
}, 30_000);

afterAll(async () => {
  proxy?.restore();
  await server?.kill();
  await proxy?.down();
  await sink?.close();
  await model?.close();
  const admin = new pg.Client({ connectionString: PG.href });
  await admin.connect();
  await admin.query(`drop schema if exists "${SCHEMA}" cascade`);
  await admin.end();
});

/** A request that must be answered within `ANSWER_WITHIN_MS` (a hang fails the test, not the run). */
async function request(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const echoes = () =>
  [...sink.accepted.values()]
    .map((delivery) => String(delivery.body.text))
    .filter((text) => text.startsWith('echo: m'));

describe('the network to PostgreSQL black-holes under a running server', () => {
  it(
    'answers 503 instead of hanging, answers every acknowledged message in order once it is back, and exits ' +
      'on SIGTERM',
    async () => {
      expect((await request('POST', '/conversation/participants', { phone_number: PHONE })).status).toBe(201);
      await waitFor(() => sink.accepted.size === 1, { what: 'the greeting' });
      for (let i = 0; i < MESSAGES; i++) {
        expect(
          (await request('POST', '/conversation/inbound', { from: PHONE, text: `m${i}`, message_id: `bh-${i}` }))
            .status,
        ).toBe(202);
      }
      await waitFor(() => model.requests.some((recorded) => lastUserText(recorded.body) === 'm0'), {
        what: 'the first turn calling the model',
      });

      // Turns in flight now meet a database that never answers.
      proxy.blackhole();
      openGate();
      const health = await request('GET', '/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: 'down', store_ok: false });
      const refused = await request('POST', '/conversation/inbound', {
        from: PHONE,
        text: 'late',
        message_id: 'bh-late',
      });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ status: 'error', code: 'store_unavailable' });
      expect(refused.headers.get('retry-after')).toBeTruthy();

      proxy.restore();
      await waitFor(() => echoes().length >= MESSAGES, {
        what: 'every acknowledged message answered',
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      expect(echoes()).toEqual(Array.from({ length: MESSAGES }, (_, i) => `echo: m${i}`));
      expect((await request('GET', '/health')).status).toBe(200);

      // Shut down while the database is unreachable again: the process still exits.
      proxy.blackhole();
      void request('GET', '/health').catch(() => undefined); // a request stuck on the database
      await server.stop();
      expect(server.exit, server.log.slice(-12).join('\n')).toEqual({ code: 0, signal: null });
    },
    120_000,
  );
});
