import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { WebhookSink } from '../kit/webhook-sink.ts';

// Replies leave through the real webhook channel to a real HTTP receiver on loopback.
let server: TestServer | undefined;
let sink: WebhookSink | undefined;
afterEach(async () => {
  sink?.release();
  await server?.close();
  await sink?.close();
  server = sink = undefined;
});

const SLOW = '+14165550181';
const FAST = '+14165550182';

async function startWithSink(): Promise<{ server: TestServer; sink: WebhookSink }> {
  sink = await new WebhookSink().start();
  const echo = createScriptedProvider((request) => ({ text: `echo: ${request.messages.at(-1)?.content}` }));
  server = await startTestServer({ OUTBOUND_WEBHOOK_URL: sink.url }, { provider: echo });
  return { server, sink };
}

const textsTo = (sink: WebhookSink, phone: string) => sink.received.filter((delivery) => delivery.body.to === phone).map((delivery) => String(delivery.body.text));

describe('outbound webhook delivery', () => {
  it('delivers another conversation\'s reply while one receiver hangs, and keeps the hung conversation\'s order', async () => {
    const { server, sink } = await startWithSink();
    for (const phone of [SLOW, FAST]) {
      expect((await server.request('POST', '/conversation/participants', { phone_number: phone })).status).toBe(201);
      await waitFor(() => textsTo(sink, phone).length === 1, { what: `the greeting to ${phone}` });
    }

    sink.hold = (delivery) => delivery.body.to === SLOW; // that receiver stops answering
    await server.request('POST', '/conversation/inbound', { from: SLOW, text: 'one', message_id: 's1' });
    await waitFor(() => textsTo(sink, SLOW).length === 2, { what: 'the first reply to reach the hung receiver' });
    await server.request('POST', '/conversation/inbound', { from: SLOW, text: 'two', message_id: 's2' });
    await server.engine.idle(); // "two" is answered and its reply queued
    await server.request('POST', '/conversation/inbound', { from: FAST, text: 'hi', message_id: 'f1' });

    // Well inside the webhook's 10 s timeout: the hung delivery is still in flight.
    await waitFor(() => textsTo(sink, FAST).includes('echo: hi'), { what: 'the other conversation\'s reply', timeoutMs: 5000 });
    // The claim that found that reply would have found the older "two" first: it waits its turn.
    expect(textsTo(sink, SLOW)).toEqual([expect.any(String), 'echo: one']);

    sink.release();
    await waitFor(() => textsTo(sink, SLOW).length === 3, { what: 'the second reply once the first was answered' });
    expect(textsTo(sink, SLOW).slice(1)).toEqual(['echo: one', 'echo: two']);
  });
});
