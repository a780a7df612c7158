// Scale-out: turns per second with N server processes (`src/main.ts`, offline demo model: the
// same instant model everywhere) on one PostgreSQL schema, or one process on a SQLite file.
// Inbound messages go round-robin to the processes, as a load balancer would send them; a turn
// counts when its reply reaches the webhook sink here.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { ChildServer } from '../../test/kit/child-server.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { flags, report, round, summarize } from '../lib/stats.ts';

const opts = flags({ store: 'postgres', processes: 1, participants: 200, messages: 2000, concurrency: 50 });
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_scale_${process.pid}`;

const delivered: number[] = [];
const sentAt = new Map<string, number[]>();
let deliveries = 0;
const sink = createServer((request, response) => {
  let raw = '';
  request.on('data', (chunk) => (raw += chunk));
  request.on('end', () => {
    deliveries += 1;
    const to = (JSON.parse(raw) as { to?: string }).to ?? '';
    const started = sentAt.get(to)?.shift();
    if (started !== undefined) delivered.push(Date.now() - started);
    response.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;

const env: Record<string, string> = opts.store === 'sqlite' ? { DATABASE_URL: tempSqliteUrl() } : { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
const servers = await Promise.all(Array.from({ length: opts.store === 'sqlite' ? 1 : opts.processes }, () => ChildServer.start({ ...env, LLM_PROVIDER: 'offline', OUTBOUND_WEBHOOK_URL: sinkUrl, LOG_LEVEL: 'info' })));
const post = (index: number, path: string, body: unknown) =>
  fetch(`${servers[index % servers.length]!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((response) => response.status);

const phones = Array.from({ length: opts.participants }, (_, index) => `+1416${String(5_200_000 + index)}`);
for (const [index, phone] of phones.entries()) await post(index, '/conversation/participants', { phone_number: phone });
while (deliveries < phones.length) await new Promise((resolve) => setTimeout(resolve, 50)); // greetings
delivered.length = 0;

let next = 0;
const started = Date.now();
await Promise.all(
  Array.from({ length: opts.concurrency }, async () => {
    while (next < opts.messages) {
      const n = next++;
      const from = phones[n % phones.length]!;
      sentAt.set(from, [...(sentAt.get(from) ?? []), Date.now()]);
      const status = await post(n, '/conversation/inbound', { from, text: `message ${n}`, message_id: `b${n}` });
      if (status !== 202) throw new Error(`inbound answered ${status}`);
    }
  }),
);
const deadline = Date.now() + 120_000;
while (delivered.length < opts.messages && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
const seconds = (Date.now() - started) / 1000;

await Promise.all(servers.map((server) => server.stop()));
sink.close();
if (opts.store !== 'sqlite') {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.end();
}
report({ store: opts.store, processes: servers.length, messages: opts.messages, delivered: delivered.length, deliveries: deliveries - phones.length, turnsPerSecond: round(delivered.length / seconds, 1), e2eMs: summarize(delivered) });
