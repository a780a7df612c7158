import type { SessionEvent } from '../../src/events/session-event.ts';
import { sessionEventSchema } from '../../src/events/session-event.ts';
import { waitFor } from './wait-for.ts';

/**
 * A real WebSocket client of a conversation's stream (Node's built-in WebSocket). Every event
 * received is parsed with the protocol's schema, so a malformed event fails the test.
 */
export class EventClient {
  readonly events: Array<SessionEvent & { receivedAt: number }> = [];
  closeCode: number | null = null;
  readonly #socket: WebSocket;
  readonly opened: Promise<void>;

  constructor(url: string) {
    this.#socket = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.#socket.addEventListener('open', () => resolve(), { once: true });
      this.#socket.addEventListener('error', () => reject(new Error(`WebSocket ${url} failed to open`)), {
        once: true,
      });
    });
    this.#socket.addEventListener('message', (message) => {
      this.events.push({
        ...sessionEventSchema.parse(JSON.parse(String(message.data))),
        receivedAt: performance.now(),
      });
    });
    this.#socket.addEventListener('close', (event) => (this.closeCode = event.code));
  }

  static async connect(baseUrl: string, conversationOrParticipantId: string, query = ''): Promise<EventClient> {
    const client = new EventClient(
      `${baseUrl.replace(/^http/, 'ws')}/api/conversations/${conversationOrParticipantId}/socket${query}`,
    );
    await client.opened;
    return client;
  }

  send(frame: unknown): void {
    this.#socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  of(type: SessionEvent['type']) {
    return this.events.filter((event) => event.type === type);
  }

  /** The log's events (resyncs and errors are per-client, not part of the log). */
  logged() {
    return this.events.filter((event) => event.type !== 'resync' && event.type !== 'error');
  }

  async waitFor(predicate: (event: SessionEvent) => boolean, what: string, timeoutMs = 10_000): Promise<SessionEvent> {
    return waitFor(() => this.events.find(predicate), { what, timeoutMs });
  }

  close(): void {
    this.#socket.close();
  }

  async closed(): Promise<number> {
    return waitFor(() => this.closeCode, { what: 'socket close' });
  }
}
