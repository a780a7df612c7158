import { systemClock } from '../../src/core/clock.ts';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { EventHub } from '../../src/events/event-hub.ts';
import { streamToSocket, type Socket } from '../../src/http/session-stream.ts';
import { waitFor } from '../kit/wait-for.ts';

/** A socket that records what the stream sends, and lets the test play the client's frames. */
class FakeSocket extends EventEmitter implements Socket {
  bufferedAmount = 0;
  readyState = 1;
  readonly sent: string[] = [];
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.emit('close');
  }
}

describe('streamToSocket', () => {
  it('runs one replay at a time: resync frames that arrive during one fold into the latest cursor', async () => {
    const cursors: Array<number | null> = [];
    let release: (() => void) | undefined;
    let replayed = 0;
    const hub = {
      attach: async (_id: string, cursor: number | null) => {
        cursors.push(cursor);
        await new Promise<void>((resolve) => (release = resolve));
        replayed += 1;
        return () => undefined;
      },
    } as unknown as EventHub;
    const socket = new FakeSocket();
    streamToSocket(socket, hub, systemClock, 'conv_1', null);
    for (let cursor = 1; cursor <= 15; cursor++)
      socket.emit('message', JSON.stringify({ type: 'resync', lastEventId: cursor }));
    release!();
    await waitFor(() => cursors.length === 2, { what: 'the folded replay' });
    release!();
    // Settled: the folded replay finished, and what it queued (nothing, if folding works) has started.
    await waitFor(() => replayed === 2, { what: 'the folded replay to finish' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(cursors).toEqual([null, 15]);
  });
});
