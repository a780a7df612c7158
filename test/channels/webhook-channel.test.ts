import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboundMessage } from '../../src/channels/channel.ts';
import { ChannelError } from '../../src/channels/channel.ts';
import { createWebhookChannel } from '../../src/channels/webhook-channel.ts';
import { WebhookSink } from '../kit/webhook-sink.ts';

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
    await channel.send(message({ id: 'out_2', idempotencyKey: 'msg_2', kind: 'poll', text: 'Did you do it?', poll: { question: 'Did you do it?', options: ['Done', 'Not yet'] } }));
    expect(sink.received[0]?.headers['idempotency-key']).toBe('msg_1');
    expect(sink.received[0]?.body).toEqual({
      id: 'out_1', participant_id: 'part_1', to: '+14165550123', kind: 'text', text: 'Time for a walk!', created_at: '2026-03-08T12:00:00.000Z',
    });
    expect(sink.received[1]?.body).toMatchObject({ kind: 'poll', poll: { question: 'Did you do it?', options: ['Done', 'Not yet'] } });
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
    const error = await createWebhookChannel({ url: sink.url, logger }).send(message()).catch((caught) => caught);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error.retryable).toBe(retryable);
  });

  it('treats an unreachable endpoint as retryable', async () => {
    const error = await createWebhookChannel({ url: 'http://127.0.0.1:9/hook', logger, timeoutMs: 2000 }).send(message()).catch((caught) => caught);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error.retryable).toBe(true);
  });
});
