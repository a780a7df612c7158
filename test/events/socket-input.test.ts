import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

const TOKEN = 'socket-input-token-0123456789';
/** The operator's own server (no API token: every socket may write), and one with a token. */
let open: TestServer;
let guarded: TestServer;

beforeAll(async () => {
  const provider = createScriptedProvider((request) => ({ text: `heard: ${request.messages.at(-1)?.content}` }));
  [open, guarded] = await Promise.all([
    startTestServer({}, { provider }),
    startTestServer({ API_TOKEN: TOKEN }, { provider }),
  ]);
});
afterAll(async () => {
  await open?.close();
  await guarded?.close();
});

const auth = { authorization: `Bearer ${TOKEN}` };

describe('input over the WebSocket', () => {
  it('takes messages and barge-ins like the HTTP routes, acking each frame with its ref', async () => {
    const id = (await open.request('POST', '/api/conversations', { flow: 'echo' })).body.result.id as string;
    const client = await EventClient.connect(open.url, id, '?lastEventId=0');
    await waitFor(() => client.of('final').length === 1, { what: 'the greeting' });
    client.send({ type: 'message', text: 'over the socket', ref: 'r1' });
    await waitFor(() => client.of('final').length === 2, { what: 'the answer' });
    expect(client.of('ack')[0]).toMatchObject({ data: { ref: 'r1', inboxId: expect.any(String), duplicate: false } });
    expect(client.of('final')[1]).toMatchObject({ text: 'echo: over the socket' });
    client.send({ type: 'barge_in', ref: 'r2' });
    await waitFor(() => client.of('ack').length === 2, { what: 'the barge-in ack' });
    expect(client.of('ack')[1]).toMatchObject({ data: { ref: 'r2', interrupted: false } });
    client.send({ type: 'message', text: '   ' });
    await waitFor(() => client.of('error').length === 1, { what: 'the refusal' });
    expect(client.of('error')[0]).toMatchObject({ data: { code: 'invalid_frame' } });
  });

  it('takes a message as long as POST …/message does, in any script; refuses a longer one by name', async () => {
    const id = (await open.request('POST', '/api/conversations', { flow: 'echo' })).body.result.id as string;
    const client = await EventClient.connect(open.url, id, '?lastEventId=0');
    await waitFor(() => client.of('final').length === 1, { what: 'the greeting' });
    // 32,000 characters of three UTF-8 bytes each: a 96 KB frame (16 KiB closed the socket with 1009).
    client.send({ type: 'message', text: '漢'.repeat(32_000), ref: 'long' });
    await waitFor(() => client.of('final').length === 2, { what: 'the answer to the long message' });
    expect(client.of('ack')[0]).toMatchObject({ data: { ref: 'long', duplicate: false } });
    client.send({ type: 'message', text: '漢'.repeat(32_001), ref: 'longer' });
    await waitFor(() => client.of('error').length === 1, { what: 'the refusal' });
    expect(client.of('error')[0]).toMatchObject({ data: { code: 'invalid_frame', field: 'text' } });
    client.close();
  });

  it("refuses input on a socket opened with a ticket (a browser's way to read a stream)", async () => {
    const id = (await guarded.request('POST', '/api/conversations', { flow: 'echo' }, auth)).body.result.id as string;
    const ticket = (await guarded.request('POST', '/api/tickets', undefined, auth)).body.result.ticket as string;
    const client = await EventClient.connect(guarded.url, id, `?lastEventId=0&ticket=${ticket}`);
    client.send({ type: 'message', text: 'let me in', ref: 'r3' });
    await waitFor(() => client.of('error').length === 1, { what: 'the refusal' });
    expect(client.of('error')[0]).toMatchObject({ data: { code: 'forbidden', field: 'type' } });
    expect(client.of('ack')).toEqual([]);
  });
});
