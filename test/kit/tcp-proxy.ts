import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy a test can cut and restore, to take a real database "away" without
 * touching the service:
 * - `down()` drops every connection and refuses new ones, `up()` listens again on the same port;
 * - `blackhole()` keeps every connection open but delivers nothing either way (bytes are held, as a
 *   network that drops packets makes TCP retransmit them), and new connections are accepted but
 *   never reach the target; `restore()` delivers what was held and connects what waited.
 */
export class TcpProxy {
  port = 0;
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  #holding = false;
  readonly #held: (() => void)[] = [];

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async up(): Promise<this> {
    const server = createServer((client) => this.#track(client, () => this.#bridge(client)));
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
    return this;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  /** Packets dropped, connections left open: nothing arrives, nothing is refused, nothing closes. */
  blackhole(): void {
    this.#holding = true;
  }

  /** The network is back: held bytes and waiting connections go through. */
  restore(): void {
    this.#holding = false;
    for (const release of this.#held.splice(0)) release();
  }

  #track(socket: Socket, start: () => void): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (this.#holding) this.#held.push(start);
    else start();
  }

  #bridge(client: Socket): void {
    if (client.destroyed) return;
    const upstream = connect(this.#target.port, this.#target.host);
    this.#track(upstream, () => {});
    this.#forward(client, upstream);
    this.#forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  #forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (!this.#holding) return void to.write(chunk);
      this.#held.push(() => void (to.destroyed || to.write(chunk)));
    });
  }
}
