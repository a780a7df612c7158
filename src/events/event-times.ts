import type { StoredEvent } from '../core/domain.ts';
import type { SessionEvent } from './session-event.ts';

/**
 * Event times as events carry them (ISO text) and as the log keeps them (Dates): formatting a Date
 * costs more than the rest of an event, and a turn's events share a few milliseconds, so the last
 * one is kept.
 */
export class EventTimes {
  #ms = Number.NaN;
  #iso = '';

  iso(date: Date): string {
    const ms = date.getTime();
    if (ms !== this.#ms) {
      this.#iso = date.toISOString();
      this.#ms = ms;
    }
    return this.#iso;
  }

  /** The event as the store keeps it: its envelope in columns, the rest as its payload. */
  toStored({ seq, turnId, type, at, conversationId, ...payload }: SessionEvent): StoredEvent {
    return { conversationId, seq, turnNo: turnId, type, payload, at: new Date(at === this.#iso ? this.#ms : at) };
  }
}
