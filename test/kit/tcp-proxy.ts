import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy a test can cut and restore, to take a real database "away" without
 * touching the service: `down()` drops every connection and refuses new ones, `up()` listens
 * again on the same port.
 */
export class TcpProxy {
  port = 0;
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async up(): Promise<this> {
    const server = createServer((client) => {
      const upstream = connect(this.#target.port, this.#target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
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
}
