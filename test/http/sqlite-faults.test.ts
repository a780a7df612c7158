import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// SQLite faults that are not bugs: another process holding the lock, and a full disk. Both must
// answer 503 with Retry-After (providers retry), keep the server answering meanwhile, and lose
// nothing once the fault is gone.
const BUSY_TIMEOUT_MS = 3000;
const PHONE = '+14165550166';
const url = tempSqliteUrl();

let server: TestServer;
/** SQL on the server's own connection (the test seam), to limit the file as a full disk would. */
let serverExec: (sqlText: string) => void = () => undefined;

beforeAll(async () => {
  server = await startTestServer(
    { DATABASE_URL: url, SQLITE_BUSY_TIMEOUT_MS: String(BUSY_TIMEOUT_MS) },
    {
      provider: createScriptedProvider((request) => ({ text: `echo: ${request.messages.at(-1)?.content}` })),
      onSqliteOpen: (exec) => (serverExec = exec),
    },
  );
  expect((await server.request('POST', '/conversation/participants', { phone_number: PHONE })).status).toBe(201);
  await server.sink.waitFor(1);
});
afterAll(() => server?.close());

const say = (text: string, messageId: string) =>
  server.request('POST', '/conversation/inbound', { from: PHONE, text, message_id: messageId });
const replies = () => server.sink.to(PHONE).map((message) => message.text);

describe('another process holds the SQLite lock', () => {
  it(
    'a write waits without blocking the server, then answers 503 with Retry-After; the retry once the lock is ' +
      'gone is answered',
    async () => {
      const other = new DatabaseSync(url.slice('sqlite:'.length));
      other.exec('BEGIN EXCLUSIVE');
      try {
        let settled = false;
        const refused = say('locked out', 'lock-1').finally(() => (settled = true));
        // The server keeps answering while the write waits for the lock: node:sqlite is
        // synchronous, so a wait inside SQLite would hold every request (and this test) until it ended.
        for (let i = 0; i < 20; i++) expect((await server.request('GET', '/health')).status).toBe(200);
        expect(settled).toBe(false);
        const response = await refused;
        expect(response.status).toBe(503);
        expect(response.body).toMatchObject({
          status: 'error',
          code: 'store_unavailable',
          message: expect.stringContaining('locked'),
        });
        expect(response.headers.get('retry-after')).toBe('5');
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      expect((await say('locked out', 'lock-1')).status).toBe(202);
      await waitFor(() => replies().includes('echo: locked out'), { what: 'the retried message answered' });
    },
  );
});

describe('the disk is full', () => {
  it('answers 503 with Retry-After and /health reports the store failing, until there is space again', async () => {
    serverExec('PRAGMA max_page_count = 1'); // no growth beyond the pages the file has now
    const text = (i: number) => `${i} ${'x'.repeat(4000)}`;
    let refused: Awaited<ReturnType<typeof say>> | undefined;
    let sent = 0;
    try {
      // The first few may still fit in pages the file has free.
      for (; sent < 20 && !refused; sent++) {
        const response = await say(text(sent), `full-${sent}`);
        if (response.status !== 202) refused = response;
      }
      expect(refused?.status).toBe(503);
      expect(refused?.body).toMatchObject({
        status: 'error',
        code: 'store_unavailable',
        message: expect.stringContaining('no space'),
      });
      expect(refused?.headers.get('retry-after')).toBe('5');
      const health = await server.request('GET', '/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({
        status: 'down',
        store_ok: false,
        store_problem: expect.stringContaining('no space'),
      });
    } finally {
      serverExec('PRAGMA max_page_count = 1073741823');
    }
    const healthy = await server.request('GET', '/health');
    expect(healthy.status).toBe(200);
    expect(healthy.body).toMatchObject({ status: 'ok', store_ok: true });
    // The provider retries the refused message; every message is answered, in order.
    expect((await say(text(sent - 1), `full-${sent - 1}`)).status).toBe(202);
    const expected = Array.from({ length: sent }, (_, i) => `echo: ${text(i)}`);
    await waitFor(() => replies().filter((reply) => reply.endsWith('x')).length === sent, {
      what: 'every message answered',
      timeoutMs: 20_000,
    });
    expect(replies().filter((reply) => reply.endsWith('x'))).toEqual(expected);
  });
});
