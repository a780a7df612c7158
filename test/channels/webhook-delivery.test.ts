import { createHmac, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startServer } from '../../src/server.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
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

async function startWithSink(env: Record<string, string> = {}): Promise<{ server: TestServer; sink: WebhookSink }> {
  sink = await new WebhookSink().start();
  const echo = createScriptedProvider((request) => ({ text: `echo: ${request.messages.at(-1)?.content}` }));
  server = await startTestServer({ OUTBOUND_WEBHOOK_URL: sink.url, ...env }, { provider: echo });
  return { server, sink };
}

const textsTo = (sink: WebhookSink, phone: string) =>
  sink.received.filter((delivery) => delivery.body.to === phone).map((delivery) => String(delivery.body.text));

describe('outbound webhook delivery', () => {
  it("delivers another conversation's reply while one receiver hangs; keeps the hung one's order", async () => {
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
    await waitFor(() => textsTo(sink, FAST).includes('echo: hi'), {
      what: "the other conversation's reply",
      timeoutMs: 5000,
    });
    // The claim that found that reply would have found the older "two" first: it waits its turn.
    expect(textsTo(sink, SLOW)).toEqual([expect.any(String), 'echo: one']);

    sink.release();
    await waitFor(() => textsTo(sink, SLOW).length === 3, { what: 'the second reply once the first was answered' });
    expect(textsTo(sink, SLOW).slice(1)).toEqual(['echo: one', 'echo: two']);
  });

  it('signs every POST, and a retry with the same webhook-id', async () => {
    const key = randomBytes(32);
    const { server, sink } = await startWithSink({ OUTBOUND_WEBHOOK_SECRET: `whsec_${key.toString('base64')}` });
    sink.statuses = [503]; // the greeting's first attempt fails; the outbox retries it a second later
    expect((await server.request('POST', '/conversation/participants', { phone_number: FAST })).status).toBe(201);
    await waitFor(() => sink.accepted.size === 1, { what: 'the greeting, retried' });
    expect(sink.received).toHaveLength(2);
    const [first, retry] = sink.received;
    expect(retry!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(retry!.headers['webhook-id']).toBe(retry!.headers['idempotency-key']);
    for (const delivery of [first!, retry!]) {
      const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = delivery.headers;
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60); // unix seconds, wall time
      expect(signature).toBe(
        `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.raw}`).digest('base64')}`,
      );
    }
  });

  it('says once at start that webhooks go unsigned without a secret, and nothing with one', async () => {
    const unsignedWarnings = async (env: Record<string, string>) => {
      const lines: string[] = [];
      const destination = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const config = loadConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        DATABASE_URL: tempSqliteUrl(),
        OUTBOUND_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
        ...env,
      });
      const running = await startServer(config, pino({ level: 'warn' }, destination));
      await running.close();
      return lines.filter((line) => line.includes('OUTBOUND_WEBHOOK_SECRET')).length;
    };
    expect(await unsignedWarnings({})).toBe(1);
    expect(await unsignedWarnings({ OUTBOUND_WEBHOOK_SECRET: 'a raw secret of enough length' })).toBe(0);
  });
});
