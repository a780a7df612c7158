// HTTP end to end: autocannon POSTs inbound messages (20 connections) to a server in its own
// process — PromptPipe (`src/main.ts`, offline demo model, SQLite file) or the HTTP floor
// (bench/servers/http-floor.ts) — and each reply is delivered to a webhook sink here. After an
// untimed warm-up second, the timed part runs from the first request to the last delivery;
// the server's CPU time over it comes from /proc/<pid>/stat. Both servers log at warn at most.
import autocannon from 'autocannon';
import { DatabaseSync } from 'node:sqlite';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { ServerProcess } from '../lib/server-process.ts';
import { flags, report, round, summarize } from '../lib/stats.ts';
import { startWebhookSink } from '../lib/webhook-sink.ts';

const opts = flags({ system: 'promptpipe', participants: 200, seconds: 10, connections: 20, rate: 0 });

const sink = await startWebhookSink();
const databaseUrl = tempSqliteUrl();
const server =
  opts.system === 'floor'
    ? await ServerProcess.start('bench/servers/http-floor.ts', {
        DATABASE: databaseUrl.slice('sqlite:'.length),
        OUTBOUND_WEBHOOK_URL: sink.url,
      })
    : await ServerProcess.start('src/main.ts', {
        DATABASE_URL: databaseUrl,
        LLM_PROVIDER: 'offline',
        OUTBOUND_WEBHOOK_URL: sink.url,
        LOG_LEVEL: 'warn',
        RATE_LIMITS: 'off',
      });
const phones = Array.from({ length: opts.participants }, (_, index) => `+1416${String(5_100_000 + index)}`);
for (const phone of phones) {
  await fetch(`${server.url}/conversation/participants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ phone_number: phone }),
  });
}
await sink.quiet(); // greetings delivered, if any

let counter = 0;
/** autocannon for `seconds`, each request a message from the next participant, as fast as acknowledged or at `rate`. */
const load = (seconds: number, prefix: string) =>
  autocannon({
    url: server.url,
    connections: opts.connections,
    duration: seconds,
    ...(opts.rate > 0 ? { overallRate: opts.rate } : {}),
    requests: [
      {
        method: 'POST',
        path: '/conversation/inbound',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          const from = phones[counter++ % phones.length]!;
          sink.sent(from);
          return {
            ...request,
            body: JSON.stringify({ from, text: `message ${counter}`, message_id: `${prefix}${counter}` }),
          };
        },
      },
    ],
  });

await load(1, 'w'); // warm-up: JIT, statement caches; not measured
await sink.quiet(500, 60_000);
sink.reset();

const cpuBefore = server.cpuMs();
const firstTimed = counter;
const started = Date.now();
const result = await load(opts.seconds, 'm');
const accepted = result['2xx'];
// Requests still in flight when the load stopped are not in autocannon's counts, but were sent and answered.
const sent = counter - firstTimed;
const deadline = Date.now() + 60_000;
while (sink.state.e2e.length < accepted && Date.now() < deadline)
  await new Promise((resolve) => setTimeout(resolve, 20));
await sink.quiet(); // requests in flight when the load stopped are answered too
const cpu = server.cpuMs() - cpuBefore;
const delivered = sink.state.e2e.length;
const seconds = (sink.state.lastDeliveryAt - started) / 1000;
await server.stop();
await sink.close();

// How much tool work the server's turns did (the offline model's calls depend on the flow's state).
const db = new DatabaseSync(databaseUrl.slice('sqlite:'.length), { readOnly: true });
const work = db
  .prepare('select (select count(*) from tool_calls) as calls, (select count(*) from turns) as turns')
  .get() as { calls: number; turns: number };
db.close();

report({
  system: opts.system,
  requests: result.requests.total,
  accepted,
  sent,
  ackPerSecond: round(result.requests.average, 0),
  ackLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
  delivered,
  messagesPerSecond: round(delivered / seconds, 1),
  cpuMsPerMessage: round(cpu / delivered, 3),
  toolCallsPerTurn: round(work.calls / work.turns, 2),
  e2eMs: summarize(sink.state.e2e),
  errors: result.errors + result.non2xx,
  redeliveries: sink.state.redeliveries,
});
