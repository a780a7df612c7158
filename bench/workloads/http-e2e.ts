// HTTP end to end: autocannon POSTs inbound messages (20 connections) to the real server running
// in its own process (`src/main.ts`, offline demo model, SQLite file); each reply is delivered to
// a webhook sink here. Server and load generator never share an event loop.
import autocannon from 'autocannon';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChildServer } from '../../test/kit/child-server.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { flags, report, round, summarize } from '../lib/stats.ts';

const opts = flags({ participants: 200, seconds: 10, connections: 20, rate: 0 });

// The sink: reads the send time the message carried, answers 200.
const e2e: number[] = [];
/** Send times per participant, in order: each delivered reply to them answers the oldest. */
const pending = new Map<string, number[]>();
const keys = new Set<string>();
let redeliveries = 0;
const sink = createServer((request, response) => {
  const key = String(request.headers['idempotency-key']);
  if (keys.has(key)) redeliveries += 1;
  keys.add(key);
  let raw = '';
  request.on('data', (chunk) => (raw += chunk));
  request.on('end', () => {
    const to = (JSON.parse(raw) as { to?: string }).to ?? '';
    const sentAt = pending.get(to)?.shift();
    if (sentAt !== undefined) e2e.push(Date.now() - sentAt);
    response.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;

const server = await ChildServer.start({ DATABASE_URL: tempSqliteUrl(), LLM_PROVIDER: 'offline', OUTBOUND_WEBHOOK_URL: sinkUrl });
const phones = Array.from({ length: opts.participants }, (_, index) => `+1416${String(5_100_000 + index)}`);
for (const phone of phones) {
  await fetch(`${server.url}/conversation/participants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phone_number: phone }) });
}
await new Promise((resolve) => setTimeout(resolve, 2000)); // greetings delivered
e2e.length = 0;
pending.clear();

let counter = 0;
const result = await autocannon({
  url: server.url,
  connections: opts.connections,
  duration: opts.seconds,
  // 0 = as fast as the server acknowledges (saturation); otherwise a steady total rate.
  ...(opts.rate > 0 ? { overallRate: opts.rate } : {}),
  requests: [
    {
      method: 'POST',
      path: '/conversation/inbound',
      headers: { 'content-type': 'application/json' },
      setupRequest: (request) => {
        const from = phones[counter++ % phones.length]!;
        pending.set(from, [...(pending.get(from) ?? []), Date.now()]);
        return { ...request, body: JSON.stringify({ from, text: `message ${counter}`, message_id: `m${counter}` }) };
      },
    },
  ],
});
const accepted = result['2xx'];
const deadline = Date.now() + 60_000;
while (e2e.length < accepted && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
await server.stop();
sink.close();
report({
  requests: result.requests.total,
  accepted,
  ackPerSecond: round(result.requests.average, 0),
  ackLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
  delivered: e2e.length,
  e2eMs: summarize(e2e),
  errors: result.errors + result.non2xx,
  redeliveries,
});
