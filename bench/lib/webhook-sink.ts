// The webhook sink the HTTP workloads deliver to: answers 200 and times each reply from the
// send time of the oldest message still waiting for one, per recipient.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function startWebhookSink() {
  const state = {
    /** Message → reply times (ms) since the last reset. */
    e2e: [] as number[],
    deliveries: 0,
    redeliveries: 0,
    lastDeliveryAt: 0,
  };
  const pending = new Map<string, number[]>();
  const keys = new Set<string>();
  const server = createServer((request, response) => {
    const key = String(request.headers['idempotency-key']);
    if (keys.has(key)) state.redeliveries += 1;
    keys.add(key);
    let raw = '';
    request.on('data', (chunk) => (raw += chunk));
    request.on('end', () => {
      state.deliveries += 1;
      state.lastDeliveryAt = Date.now();
      const sentAt = pending.get((JSON.parse(raw) as { to?: string }).to ?? '')?.shift();
      if (sentAt !== undefined) state.e2e.push(Date.now() - sentAt);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    state,
    /** A message to `to` was sent now: its reply will answer it. */
    sent(to: string): void {
      const times = pending.get(to);
      if (times) times.push(Date.now());
      else pending.set(to, [Date.now()]);
    },
    reset(): void {
      state.e2e.length = 0;
      pending.clear();
    },
    /** Waits until no delivery has come for `quietMs` (at most `maxMs`). */
    async quiet(quietMs = 300, maxMs = 10_000): Promise<void> {
      const started = Date.now();
      const since = () => Date.now() - Math.max(state.lastDeliveryAt, started);
      while (since() < quietMs && Date.now() - started < maxMs) await new Promise((resolve) => setTimeout(resolve, 50));
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
