import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The common part of the fake provider servers: a real HTTP server on a loopback port, the list of
 * accepted requests, and waiting for them. Subclasses answer requests in `handle`.
 */
export abstract class LoopbackFake<Accepted> {
  /** Requests the fake accepted, in arrival order. */
  readonly sent: Accepted[] = [];
  /** `http://127.0.0.1:<port><basePath>`, set by `start()`. */
  baseUrl = '';
  readonly #server: Server;
  readonly #what: string;
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  /** `onError` answers a request whose handling threw. */
  constructor(what: string, onError: (response: ServerResponse, error: unknown) => void) {
    this.#what = what;
    this.#server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => onError(response, error));
    });
  }

  protected abstract handle(request: IncomingMessage, response: ServerResponse): Promise<void>;

  async start(basePath = ''): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${basePath}`;
    return this;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Resolves once at least `count` requests were accepted, or rejects after `timeoutMs`. */
  waitForSent(count: number, timeoutMs = 5000): Promise<void> {
    if (this.sent.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`expected ${count} ${this.#what} sends, got ${this.sent.length}`)),
        timeoutMs,
      );
      this.#waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  protected accept(item: Accepted): void {
    this.sent.push(item);
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.sent.length < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  }
}

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (raw += chunk));
    request.on('end', () => resolve(raw));
    request.on('error', reject);
  });
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
