import type { SessionEvent } from '../events/session-event.ts';

export class ChatApiError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

interface ParticipantJson {
  id: string;
  phone_number: string;
}

/** The public API as the terminal chat uses it (the same JSON a study team's scripts see). */
export class ChatApi {
  readonly #base: string;
  readonly #token: string | undefined;

  constructor(base: string, token: string | undefined) {
    this.#base = base;
    this.#token = token;
  }

  health = () => this.#call<unknown>('GET', '/health');
  enrol = (body: object) => this.#call<ParticipantJson>('POST', '/conversation/participants', body);
  say = (id: string, text: string) =>
    this.#call<unknown>('POST', `/api/conversations/${id}/message`, { type: 'text', text });
  advance = (by: string) => this.#call<{ now: string; fired: number }>('POST', '/admin/clock', { advance: by });
  timers = (id: string) =>
    this.#call<Array<{ kind: string; due_at: string }>>('GET', `/conversation/participants/${id}/timers`);
  state = (id: string) =>
    this.#call<{ state: string; sub_state: string; profile: unknown }>('GET', `/conversation/participants/${id}/state`);

  async findByPhone(phone: string): Promise<ParticipantJson | undefined> {
    const digits = phone.replace(/[^\d]/g, '');
    const list = await this.#call<ParticipantJson[]>('GET', '/conversation/participants?limit=1000');
    return list.find((participant) => participant.phone_number.replace(/[^\d]/g, '') === digits);
  }

  /** Follows the conversation's event stream from now on, reconnecting from the last seq. */
  async follow(id: string, onEvent: (event: SessionEvent) => void): Promise<() => void> {
    let lastSeq: number | null = null;
    let stopped = false;
    let socket: WebSocket | undefined;
    const open = async () => {
      const query = new URLSearchParams();
      if (lastSeq !== null) query.set('lastEventId', String(lastSeq));
      if (this.#token) query.set('ticket', (await this.#call<{ ticket: string }>('POST', '/api/tickets')).ticket);
      socket = new WebSocket(`${this.#base.replace(/^http/, 'ws')}/api/conversations/${id}/socket?${query}`);
      socket.addEventListener('message', (message) => {
        const event = JSON.parse(String(message.data)) as SessionEvent;
        if (event.type !== 'resync' && event.type !== 'error') lastSeq = event.seq;
        if (event.type === 'resync') lastSeq = event.data.nextCursor ?? event.seq;
        onEvent(event);
      });
      socket.addEventListener('close', () => {
        if (!stopped) setTimeout(() => void open().catch(() => undefined), 1000);
      });
      await new Promise((resolve, reject) => {
        socket!.addEventListener('open', resolve, { once: true });
        socket!.addEventListener('error', reject, { once: true });
      });
    };
    await open();
    return () => {
      stopped = true;
      socket?.close();
    };
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    const response = await fetch(`${this.#base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await response.json().catch(() => ({}))) as {
      status?: string;
      code?: string;
      message?: string;
      result?: T;
    };
    if (!response.ok)
      throw new ChatApiError(parsed.code ?? `http_${response.status}`, parsed.message ?? response.statusText);
    return (parsed.result ?? parsed) as T;
  }
}
