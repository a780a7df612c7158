// Workload "turn" on our engine: the real server stack in-process (no HTTP), scripted instant model.
import { perTurn } from '../lib/meter.ts'; // first: it counts database work from here on
import { NO_LIMITS } from '../../src/channels/channel.ts';
import { pino } from 'pino';
import { statSync } from 'node:fs';
import { loadConfig } from '../../src/config/config.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startServer } from '../../src/server.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { PROFILE_ARGS, REPLY, SCHEDULER_ARGS, wantsTools } from '../lib/turn-script.ts';
import { allConversations, driveTurns, turnFlags } from '../lib/drive.ts';
import { flags, report, summarize } from '../lib/stats.ts';
import { benchParticipant } from '../lib/bench-participant.ts';
import pg from 'pg';

// `--pendingTimers N`: N pending timers per participant (a study's armed prompts), due in days: none fires.
// `--deltas N`: the reply streamed in N pieces (3 by default; a real model streams about one a word).
const opts = { ...turnFlags(), ...flags({ store: 'sqlite', pendingTimers: 0, deltas: 3 }) };
const schema = `bench_${process.pid}`;
const pgUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const databaseUrl = opts.store === 'postgres' ? pgUrl : tempSqliteUrl();

const provider = createScriptedProvider(
  (request) => {
    const last = request.messages.at(-1)!;
    if (wantsTools(last.role) && !last.content.startsWith('[')) {
      return {
        toolCalls: [
          { name: 'save_user_profile', arguments: PROFILE_ARGS },
          { name: 'scheduler', arguments: SCHEDULER_ARGS },
        ],
      };
    }
    return { text: REPLY };
  },
  { recordRequests: false, deltas: opts.deltas },
);

const config = loadConfig({
  HOST: '127.0.0.1',
  PORT: '0',
  DATABASE_URL: databaseUrl,
  DATABASE_SCHEMA: opts.store === 'postgres' ? schema : 'public',
  LOG_LEVEL: 'silent',
  CLOCK: 'virtual',
  RATE_LIMITS: 'off',
});
/** Delivery is out of scope for this workload: a channel that accepts everything and keeps nothing. */
const channel = { name: 'webhook', capabilities: NO_LIMITS, send: async () => undefined };
const server = await startServer(config, pino({ level: 'silent' }), { provider, channel });

const phones: string[] = [];
for (let index = 0; index < allConversations(opts); index++) {
  const phone = `+1416${String(5_000_000 + index).padStart(7, '0')}`;
  await server.store.insertParticipant(benchParticipant(index, phone, 'America/Toronto'));
  await server.store.insertConversation(
    {
      id: `c${index}`,
      participantId: `p${index}`,
      flow: 'habit-coach',
      channel: 'webhook',
      state: 'CONVERSATION_ACTIVE',
      subState: 'INTAKE',
      version: 0,
      createdAt: new Date(),
      updatedAt: new Date(),
    },
    { transcriptSearch: false },
  ); // as enrolment does for a flow that never searches its transcript
  for (let k = 0; k < opts.pendingTimers; k++)
    await server.store.scheduleTimer({
      id: `t${index}_${k}`,
      kind: 'reminder',
      conversationId: `c${index}`,
      participantId: `p${index}`,
      dedupKey: `bench:${index}:${k}`,
      dueAt: new Date(Date.now() + (k + 1) * 86_400_000),
      payload: {},
      createdAt: new Date(),
    });
  phones.push(phone);
}

const { latencies, seconds, writes } = await driveTurns(
  opts,
  async (conversation, index) => {
    const outcome = await server.inbound.receive({
      channel: 'http',
      sender: phones[conversation]!,
      text: `message ${index}`,
      channelMessageId: null,
    });
    if (outcome.status !== 'queued') throw new Error('not queued');
    await outcome.turn;
  },
  { pgUrl: opts.store === 'postgres' ? pgUrl : undefined, settle: () => server.engine.idle() },
);
await server.close();

let databaseMiB: number;
if (opts.store === 'postgres') {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  const size = await client.query(
    `select coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)::bigint as bytes
       from pg_tables where schemaname = $1`,
    [schema],
  );
  databaseMiB = Number(size.rows[0].bytes) / 2 ** 20;
  await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
} else {
  const file = databaseUrl.slice('sqlite:'.length);
  databaseMiB =
    [file, `${file}-wal`].reduce((sum, path) => sum + (statSync(path, { throwIfNoEntry: false })?.size ?? 0), 0) /
    2 ** 20;
}
report({
  turns: latencies.length,
  seconds,
  turnsPerSecond: latencies.length / seconds,
  latencyMs: summarize(latencies),
  databaseMiB,
  perTurn: perTurn(writes, latencies.length),
});
