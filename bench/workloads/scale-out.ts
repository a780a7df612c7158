// Scale-out: N server processes (`src/main.ts`, offline demo model: the same instant model
// everywhere) on one PostgreSQL schema, or one process on a SQLite file. Each conversation goes
// to one process, chosen by a hash of the sender's phone (a load balancer with affinity); a turn
// counts when its reply reaches the webhook sink here. After an untimed warm-up, reports turns/s
// and CPU ms per turn: the server processes plus the PostgreSQL backends of their connections
// (found by application_name; see bench/lib/pg-backends.ts). Messages come from `concurrency`
// senders in a closed loop, or with `--rate R` at R a second (an open loop: CPU per turn at a
// load below saturation).
import pg from 'pg';
import { ownWalBytes, walPosition } from '../lib/pg-counters.ts';
import { backendCpu, backendCpuDelta } from '../lib/pg-backends.ts';
import { ServerProcess } from '../lib/server-process.ts';
import { flags, report, round, summarize } from '../lib/stats.ts';
import { startWebhookSink } from '../lib/webhook-sink.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';

const opts = flags({ store: 'postgres', processes: 1, participants: 200, messages: 2000, concurrency: 50, rate: 0 });
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_scale_${process.pid}`;
const application = `bench-scale-${process.pid}`;
const postgres = opts.store !== 'sqlite';

const sink = await startWebhookSink();
const pgUrl = new URL(PG_URL);
pgUrl.searchParams.set('application_name', application);
const env: Record<string, string> = postgres
  ? { DATABASE_URL: pgUrl.toString(), DATABASE_SCHEMA: schema }
  : { DATABASE_URL: tempSqliteUrl() };
const start = () =>
  ServerProcess.start('src/main.ts', {
    ...env,
    LLM_PROVIDER: 'offline',
    OUTBOUND_WEBHOOK_URL: sink.url,
    LOG_LEVEL: 'warn',
    RATE_LIMITS: 'off',
  });
// The first one alone creates the schema and migrates; the others find it done.
const servers = [await start()];
if (postgres) servers.push(...(await Promise.all(Array.from({ length: opts.processes - 1 }, start))));

/** FNV-1a of the phone number: the same process for every message of a conversation. */
function route(phone: string): ServerProcess {
  let hash = 0x811c9dc5;
  for (const char of phone) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return servers[hash % servers.length]!;
}
const post = (phone: string, path: string, body: unknown) =>
  fetch(`${route(phone).url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((response) => response.status);

const phones = Array.from({ length: opts.participants }, (_, index) => `+1416${String(5_200_000 + index)}`);
for (const phone of phones) await post(phone, '/conversation/participants', { phone_number: phone });
await sink.quiet(); // greetings

let unavailable = 0;
/** Posts message `n`; a 503 (the database did not answer in time) is retried, as the API asks, and counted. */
async function postMessage(n: number): Promise<void> {
  const from = phones[n % phones.length]!;
  const body = { from, text: `message ${n}`, message_id: `b${n}` };
  sink.sent(from);
  let status = await post(from, '/conversation/inbound', body);
  for (let attempt = 1; status === 503 && attempt <= 5; attempt++) {
    unavailable += 1;
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    status = await post(from, '/conversation/inbound', body);
  }
  if (status !== 202) throw new Error(`inbound answered ${status}`);
}

/** `count` messages from the participants in turn (closed loop, or at `rate`); resolves when all are delivered. */
async function send(first: number, count: number): Promise<void> {
  const expected = sink.state.e2e.length + count;
  if (opts.rate > 0) {
    const start = Date.now();
    const at = (index: number) => start + (index * 1000) / opts.rate - Date.now();
    await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, at(index))));
        await postMessage(first + index);
      }),
    );
  } else {
    let next = first;
    await Promise.all(
      Array.from({ length: opts.concurrency }, async () => {
        while (next < first + count) await postMessage(next++);
      }),
    );
  }
  const deadline = Date.now() + 120_000;
  while (sink.state.e2e.length < expected && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

const warmup = Math.max(50, Math.round(opts.messages / 10));
await send(opts.messages, warmup); // untimed: JIT, pools, statement caches
sink.reset();

const admin = new pg.Client({ connectionString: PG_URL });
if (postgres) await admin.connect();
const cpuBefore = servers.map((server) => server.cpuMs());
const backendsBefore = postgres ? await backendCpu(admin, application) : new Map<number, number>();
const walBefore = postgres ? await walPosition(admin) : undefined;
const started = Date.now();
unavailable = 0;
await send(0, opts.messages);
const seconds = (Date.now() - started) / 1000;
const delivered = sink.state.e2e.length;
const serverCpu = servers.reduce((sum, server, index) => sum + server.cpuMs() - cpuBefore[index]!, 0);
const backendsCpu = postgres ? backendCpuDelta(backendsBefore, await backendCpu(admin, application)) : 0;
const walBytes = walBefore ? await ownWalBytes(admin, walBefore, await walPosition(admin)) : Number.NaN;

await Promise.all(servers.map((server) => server.stop()));
await sink.close();
if (postgres) {
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.end();
}
report({
  store: opts.store,
  processes: servers.length,
  participants: opts.participants,
  messages: opts.messages,
  ...(opts.rate > 0 ? { ratePerSecond: opts.rate } : { concurrency: opts.concurrency }),
  delivered,
  turnsPerSecond: round(delivered / seconds, 1),
  unavailable,
  cpuMsPerTurn: {
    total: round((serverCpu + backendsCpu) / delivered, 2),
    servers: round(serverCpu / delivered, 2),
    postgres: round(backendsCpu / delivered, 2),
  },
  walBytesPerTurn: round(walBytes / delivered, 0),
  e2eMs: summarize(sink.state.e2e),
});
