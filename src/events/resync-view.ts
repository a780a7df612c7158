import { attachReplaying } from './attach-replaying.ts';
import type { EventHub, EventListener, ResyncEvent } from './event-hub.ts';
import type { SessionEvent } from './session-event.ts';

/** The flow's view of a conversation for its `resync` snapshots (null when it has none). */
export type ViewOf = (conversationId: string) => Promise<Record<string, unknown> | null>;

/**
 * The event hub's replay and attach with the flow's view added to every `resync` snapshot, read
 * after the hub took its snapshot and before any later event is sent (live events that arrive
 * meanwhile wait, in order): a client never sees a view older than the events before it.
 */
export class ResyncViews {
  readonly #events: EventHub;
  readonly #viewOf: ViewOf;

  constructor(events: EventHub, viewOf: ViewOf) {
    this.#events = events;
    this.#viewOf = viewOf;
  }

  async replay(
    conversationId: string,
    cursor: number | null,
  ): Promise<{ events: SessionEvent[]; resync: ResyncEvent }> {
    const replayed = await this.#events.replay(conversationId, cursor);
    const view = await this.#viewOf(conversationId);
    return { ...replayed, resync: { ...replayed.resync, data: { ...replayed.resync.data, view } } };
  }

  /** As `EventHub.attach`: replays from `cursor`, then follows live; `send` sees each event once, in seq order. */
  async attach(conversationId: string, cursor: number | null, send: EventListener): Promise<() => void> {
    return attachReplaying(
      {
        subscribe: (id, listener) => this.#events.subscribe(id, listener),
        replay: (id, from) => this.replay(id, from),
      },
      conversationId,
      cursor,
      send,
    );
  }
}
