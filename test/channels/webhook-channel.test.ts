import { createHmac } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboundMessage } from '../../src/channels/channel.ts';
import { ChannelError } from '../../src/channels/channel.ts';
import { signWebhook, verifyWebhook } from '../../src/channels/standard-webhooks.ts';
import { createWebhookChannel } from '../../src/channels/webhook-channel.ts';
import { loadConfig } from '../../src/config/config.ts';
import { WebhookSink, type ReceivedWebhook } from '../kit/webhook-sink.ts';

const logger = pino({ level: 'silent' });
let sink: WebhookSink | undefined;
afterEach(() => sink?.close());

const message = (overrides: Partial<OutboundMessage> = {}): OutboundMessage => ({
  id: 'out_1',
  participantId: 'part_1',
  conversationId: 'conv_1',
  recipient: '+14165550123',
  kind: 'text',
  text: 'Time for a walk!',
  poll: null,
  createdAt: new Date('2026-03-08T12:00:00Z'),
  idempotencyKey: 'msg_1',
  ...overrides,
});

describe('webhook channel', () => {
  it('POSTs the documented JSON body with an Idempotency-Key header', async () => {
    sink = await new WebhookSink().start();
    const channel = createWebhookChannel({ url: sink.url, logger });
    await channel.send(message());
    await channel.send(
      message({
        id: 'out_2',
        idempotencyKey: 'msg_2',
        kind: 'poll',
        text: 'Did you do it?',
        poll: { question: 'Did you do it?', options: ['Done', 'Not yet'] },
      }),
    );
    expect(sink.received[0]?.headers['idempotency-key']).toBe('msg_1');
    expect(sink.received[0]?.body).toEqual({
      id: 'out_1',
      participant_id: 'part_1',
      to: '+14165550123',
      kind: 'text',
      text: 'Time for a walk!',
      created_at: '2026-03-08T12:00:00.000Z',
    });
    expect(sink.received[1]?.body).toMatchObject({
      kind: 'poll',
      poll: { question: 'Did you do it?', options: ['Done', 'Not yet'] },
    });
  });

  it.each([
    [500, true],
    [503, true],
    [429, true],
    [408, true],
    [400, false],
    [404, false],
  ])('classifies a %i answer as retryable=%s', async (status, retryable) => {
    sink = await new WebhookSink().start();
    sink.statuses = [status];
    const error = await createWebhookChannel({ url: sink.url, logger })
      .send(message())
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error.retryable).toBe(retryable);
  });

  it('treats an unreachable endpoint as retryable', async () => {
    const error = await createWebhookChannel({ url: 'http://127.0.0.1:9/hook', logger, timeoutMs: 2000 })
      .send(message())
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error.retryable).toBe(true);
  });
});

/** The check a receiver writes from the Standard Webhooks spec, independently of ours. */
function signatureMatches(key: Buffer, delivery: ReceivedWebhook, raw = delivery.raw): boolean {
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const expected = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${raw}`).digest('base64')}`;
  return delivery.headers['webhook-signature'] === expected;
}

const keyOf = (secret: string) => loadConfig({ OUTBOUND_WEBHOOK_SECRET: secret }).outbound.webhookSigningKey!;

describe('webhook signatures (Standard Webhooks)', () => {
  const at = new Date('2026-03-08T12:00:00.750Z');
  const key = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');

  it.each([
    ["the spec's whsec_<base64> form, decoded", `whsec_${key.toString('base64')}`],
    ['raw text, as is', key.toString('utf8')],
  ])('signs each POST with a secret in %s', async (_form, secret) => {
    expect(keyOf(secret).equals(key)).toBe(true);
    sink = await new WebhookSink().start();
    await createWebhookChannel({ url: sink.url, logger, signingKey: keyOf(secret), now: () => at }).send(message());
    const [delivery] = sink.received;
    expect(delivery!.headers).toMatchObject({ 'webhook-id': 'msg_1', 'webhook-timestamp': '1772971200' });
    expect(signatureMatches(key, delivery!)).toBe(true);
    const tampered = delivery!.raw.replace('Time for a walk!', 'Time for a run!');
    expect(signatureMatches(key, delivery!, tampered)).toBe(false);
    expect(signatureMatches(Buffer.from('another key of sixteen+ bytes'), delivery!)).toBe(false);
  });

  it('keeps webhook-id on a retry and signs each attempt with its own timestamp', async () => {
    sink = await new WebhookSink().start();
    let now = at;
    const channel = createWebhookChannel({ url: sink.url, logger, signingKey: key, now: () => now });
    sink.statuses = [503];
    await expect(channel.send(message())).rejects.toBeInstanceOf(ChannelError);
    now = new Date(at.getTime() + 4000);
    await channel.send(message());
    expect(
      sink.received.map((delivery) => [delivery.headers['webhook-id'], delivery.headers['webhook-timestamp']]),
    ).toEqual([
      ['msg_1', '1772971200'],
      ['msg_1', '1772971204'],
    ]);
    expect(sink.received.every((delivery) => signatureMatches(key, delivery))).toBe(true);
  });

  it('sends no signature headers without a secret', async () => {
    sink = await new WebhookSink().start();
    await createWebhookChannel({ url: sink.url, logger }).send(message());
    expect(Object.keys(sink.received[0]!.headers).filter((name) => name.startsWith('webhook-'))).toEqual([]);
  });

  it('verifyWebhook (for receivers) accepts what was signed, and nothing tampered, stale or under another key', () => {
    const body = '{"id":"out_1","text":"hi"}';
    const headers = signWebhook(key, 'msg_1', body, at);
    const given = {
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
    };
    expect(verifyWebhook(key, given, body, at)).toBe(true);
    // One of several (a key rotation).
    expect(verifyWebhook(key, { ...given, signature: `v1,bm9wZQ== ${given.signature}` }, body, at)).toBe(true);
    expect(verifyWebhook(key, given, body.replace('hi', 'ho'), at)).toBe(false);
    expect(verifyWebhook(key, { ...given, id: 'msg_2' }, body, at)).toBe(false);
    expect(verifyWebhook(Buffer.from('another key of sixteen+ bytes'), given, body, at)).toBe(false);
    expect(verifyWebhook(key, given, body, new Date(at.getTime() + 301_000))).toBe(false);
    expect(verifyWebhook(key, { ...given, signature: given.signature.replace('v1,', 'v2,') }, body, at)).toBe(false);
  });
});
