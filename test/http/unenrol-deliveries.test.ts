import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutboundMessage } from '../../src/channels/channel.ts';
import { ChannelSink } from '../kit/channel-sink.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

/** A channel whose chosen deliveries hang until released (a receiver that is slow to answer). */
class HoldingSink extends ChannelSink {
  holding: ((message: OutboundMessage) => boolean) | null = null;
  readonly held: OutboundMessage[] = [];
  #release: Array<() => void> = [];

  override async send(message: OutboundMessage): Promise<void> {
    if (this.holding?.(message)) {
      this.held.push(message);
      await new Promise<void>((resolve) => this.#release.push(resolve));
    }
    return super.send(message);
  }

  release(): void {
    for (const resolve of this.#release.splice(0)) resolve();
  }
}

const PHONE = '+14165550189';
const sink = new HoldingSink();
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ CLOCK: 'virtual' }, { channel: sink });
});
afterAll(async () => {
  sink.release();
  await server.close();
});

describe('unenrolment and the replies still on their way', () => {
  it('waits for the reply being sent, drops the ones after it, then says goodbye', async () => {
    const created = await server.request('POST', '/conversation/participants', { phone_number: PHONE });
    const id = created.body.result.id as string;
    await waitFor(() => sink.to(PHONE).length === 1, { what: 'the greeting' });

    // The coach's replies hang; the goodbye would not.
    sink.holding = (message) => message.recipient === PHONE && !/unenrolled/i.test(message.text);
    await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'I want to walk more' });
    await waitFor(() => sink.held.length === 1, { what: 'the first reply, on its way' });
    await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'to have more energy' });
    const turns = async () => (await server.request('GET', `/conversation/participants/${id}/turns`)).body.result;
    await waitFor(async () => (await turns()).length === 3, { what: 'the second turn' });

    const removal = server.request('DELETE', `/conversation/participants/${id}`);
    await waitFor(async () => (await server.request('GET', `/conversation/participants/${id}`)).status === 404, {
      what: 'the deletion',
    });
    // Deleted, and the goodbye waits behind the reply the receiver has not answered yet.
    expect(sink.to(PHONE)).toHaveLength(1);
    sink.release();
    expect((await removal).status).toBe(200);

    const texts = sink.to(PHONE).map((message) => message.text);
    expect(texts).toHaveLength(3);
    expect(texts[1]).toBe(sink.held[0]!.text);
    expect(texts[2]).toMatch(/unenrolled/i);
  });
});
