import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// Messages acknowledged (202) but not yet answered when the server stops are answered after the
// restart, whatever the clock says about when they arrived.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PHONE = '+14165550142';

describe('recovery after a restart', () => {
  it('answers pending messages even when the virtual clock restarts before their arrival time', async () => {
    const database = tempSqliteUrl();
    // The model never answers "stuck" before the server stops: the turn is aborted, the message stays pending.
    const hanging = createScriptedProvider((request) =>
      String(request.messages.at(-1)?.content).includes('stuck') ? { text: 'late', delayMs: 60_000 } : { text: 'hi' },
    );
    server = await startTestServer(
      { DATABASE_URL: database, CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z', SHUTDOWN_TIMEOUT_MS: '0' },
      { provider: hanging },
    );
    expect((await server.request('POST', '/conversation/participants', { phone_number: PHONE })).status).toBe(201);
    await server.request('POST', '/admin/clock', { advance: '1d' });
    expect(
      (await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'stuck', message_id: 'm1' })).status,
    ).toBe(202);
    await server.close();

    // A day earlier than the message's arrival (a clock set back): without its kept virtual time,
    // the restarted clock starts at CLOCK_START again.
    const raw = new DatabaseSync(database.slice('sqlite:'.length));
    raw.exec('delete from virtual_clock');
    raw.close();
    const echo = createScriptedProvider((request) => ({ text: `echo: ${request.messages.at(-1)?.content}` }));
    server = await startTestServer(
      { DATABASE_URL: database, CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' },
      { provider: echo },
    );
    await waitFor(() => server!.sink.to(PHONE).some((message) => message.text === 'echo: stuck'), {
      what: 'the pending message answered after the restart',
    });
  });
});
