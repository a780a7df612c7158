import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The body exactly as received (what a signature covers). */
  raw: string;
  body: any;
}

/**
 * A real HTTP endpoint on loopback that receives outbound webhooks. It answers with the statuses
 * it is told to (then 200), and drops a delivery whose Idempotency-Key it has already accepted.
 * A delivery `hold` picks is received but not answered until `release()` (a receiver that hangs).
 */
export class WebhookSink {
  readonly received: ReceivedWebhook[] = [];
  readonly accepted = new Map<string, ReceivedWebhook>();
  statuses: number[] = [];
  hold: ((delivery: ReceivedWebhook) => boolean) | null = null;
  #held: Array<() => void> = [];
  #server: Server;
  url = '';

  constructor() {
    this.#server = createServer((request, response) => {
      let raw = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => (raw += chunk));
      request.on('end', () => {
        const delivery = { headers: request.headers, raw, body: JSON.parse(raw || 'null') };
        this.received.push(delivery);
        const answer = () => {
          const status = this.statuses.shift() ?? 200;
          const key = String(request.headers['idempotency-key'] ?? '');
          if (status < 300 && !this.accepted.has(key)) this.accepted.set(key, delivery);
          response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
        };
        if (this.hold?.(delivery)) this.#held.push(answer);
        else answer();
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Answers the held deliveries (as any other) and holds no more. */
  release(): void {
    this.hold = null;
    for (const answer of this.#held.splice(0)) answer();
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
