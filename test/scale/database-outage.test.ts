// @requires postgres
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { TcpProxy } from '../kit/tcp-proxy.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { PG_URL } from '../kit/requirements.ts';

// The database goes away under a running server (a TCP proxy in front of the real PostgreSQL is
// cut), then comes back: inbound routes answer 503 so providers retry, nothing acknowledged is
// lost, and the server works again without a restart.
const PG = new URL(PG_URL);
const SCHEMA = `outage_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const PHONE = '+14165550177';

let proxy: TcpProxy;
let server: TestServer;

beforeAll(async () => {
  proxy = await new TcpProxy({ host: PG.hostname, port: Number(PG.port || 5432) }).up();
  const url = new URL(PG);
  url.port = String(proxy.port);
  server = await startTestServer(
    { DATABASE_URL: url.href, DATABASE_SCHEMA: SCHEMA },
    { provider: createScriptedProvider((request) => ({ text: `echo: ${request.messages.at(-1)?.content}` })) },
  );
}, 30_000);

afterAll(async () => {
  await server?.close().catch(() => undefined);
  await proxy?.down();
  const admin = new pg.Client({ connectionString: PG.href });
  await admin.connect();
  await admin.query(`drop schema if exists "${SCHEMA}" cascade`);
  await admin.end();
});

describe('the database goes away and comes back', () => {
  it(
    'answers 503 store_unavailable with Retry-After while it is gone, and everything acknowledged is answered ' +
      'once it is back',
    async () => {
      expect((await server.request('POST', '/conversation/participants', { phone_number: PHONE })).status).toBe(201);
      await waitFor(() => server.sink.to(PHONE).length === 1, { what: 'greeting' });
      const accepted = await server.request('POST', '/conversation/inbound', {
        from: PHONE,
        text: 'before',
        message_id: 'o1',
      });
      expect(accepted.status).toBe(202);
      await waitFor(() => server.sink.to(PHONE).length === 2, { what: 'reply before the outage' });

      await proxy.down();
      const refused = await server.request('POST', '/conversation/inbound', {
        from: PHONE,
        text: 'during',
        message_id: 'o2',
      });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ status: 'error', code: 'store_unavailable' });
      expect(refused.headers.get('retry-after')).toBe('5');
      expect((await server.request('GET', '/health')).status).toBe(503);

      await proxy.up();
      // The provider retries the refused message; the server recovered without a restart.
      await waitFor(
        async () =>
          (await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'during', message_id: 'o2' }))
            .status === 202,
        {
          what: 'inbound accepted again',
          timeoutMs: 20_000,
          intervalMs: 250,
        },
      );
      await waitFor(() => server.sink.to(PHONE).length === 3, { what: 'reply after the outage', timeoutMs: 20_000 });
      expect(server.sink.to(PHONE).map((message) => message.text)).toEqual([
        expect.any(String),
        'echo: before',
        'echo: during',
      ]);
    },
    60_000,
  );
});
