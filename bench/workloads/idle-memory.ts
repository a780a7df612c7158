// Memory per idle conversation: 10,000 conversations that have each had one turn, then sit idle.
// Heap and RSS after a forced GC, before and after; the difference divided by the count.
import { NO_LIMITS } from '../../src/channels/channel.ts';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startServer } from '../../src/server.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { benchParticipant } from '../lib/bench-participant.ts';
import { flags, report, round } from '../lib/stats.ts';

const opts = flags({ conversations: 10_000 });
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const measure = () => {
  gc();
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
};

const provider = createScriptedProvider(() => ({ text: 'Noted, thank you.' }), { recordRequests: false });
const config = loadConfig({
  HOST: '127.0.0.1',
  PORT: '0',
  DATABASE_URL: tempSqliteUrl(),
  LOG_LEVEL: 'silent',
  CLOCK: 'virtual',
  RATE_LIMITS: 'off',
});
const channel = { name: 'webhook', capabilities: NO_LIMITS, send: async () => undefined };
const server = await startServer(config, pino({ level: 'silent' }), { provider, channel });

const now = new Date();
for (let index = 0; index < opts.conversations; index++) {
  await server.store.insertParticipant(benchParticipant(index, `+1416${String(5_000_000 + index)}`, 'UTC'));
  await server.store.insertConversation({
    id: `c${index}`,
    participantId: `p${index}`,
    flow: 'habit-coach',
    channel: 'webhook',
    state: 'CONVERSATION_ACTIVE',
    subState: 'INTAKE',
    version: 0,
    createdAt: now,
    updatedAt: now,
  });
}
const before = measure();
for (let index = 0; index < opts.conversations; index++) {
  const outcome = await server.inbound.receive({
    channel: 'http',
    sender: `+1416${String(5_000_000 + index)}`,
    text: 'hello',
    channelMessageId: null,
  });
  if (outcome.status === 'queued') await outcome.turn;
}
await server.engine.idle();
await server.events.flushAll();
await new Promise((resolve) => setTimeout(resolve, 200));
const after = measure();
await server.close();
report({
  conversations: opts.conversations,
  heapPerConversationBytes: round((after.heapUsed - before.heapUsed) / opts.conversations, 0),
  rssPerConversationBytes: round((after.rss - before.rss) / opts.conversations, 0),
  heapAfterMiB: round(after.heapUsed / 2 ** 20, 1),
});
