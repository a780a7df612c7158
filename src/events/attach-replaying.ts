import type { EventListener } from './event-hub.ts';
import type { SessionEvent } from './session-event.ts';

/** What `attachReplaying` follows: live events, and a replay from a cursor ending with its resync. */
export interface ReplayingSource {
  subscribe(conversationId: string, listener: EventListener): () => void;
  replay(conversationId: string, cursor: number | null): Promise<{ events: SessionEvent[]; resync: SessionEvent }>;
}

/**
 * Replays from `cursor`, then follows live: `send` sees each event once, in seq order. Live
 * events that arrive during the replay wait, and those the replay already covered are dropped.
 * Returns the unsubscribe function.
 */
export async function attachReplaying(
  source: ReplayingSource,
  conversationId: string,
  cursor: number | null,
  send: EventListener,
): Promise<() => void> {
  let lastSent = -1;
  let buffered: SessionEvent[] | null = [];
  const unsubscribe = source.subscribe(conversationId, (event) => {
    if (buffered) buffered.push(event);
    // Outside the log (seq 0: the conversation's end), it has no place to keep in the order.
    else if (event.seq === 0) send(event);
    else if (event.seq > lastSent) {
      lastSent = event.seq;
      send(event);
    }
  });
  try {
    const { events, resync } = await source.replay(conversationId, cursor);
    for (const event of events) send(event);
    send(resync);
    lastSent = resync.seq;
    const live = buffered;
    buffered = null;
    for (const event of live) {
      if (event.seq > lastSent) {
        lastSent = event.seq;
        send(event);
      }
    }
  } catch (error) {
    unsubscribe();
    throw error;
  }
  return unsubscribe;
}
