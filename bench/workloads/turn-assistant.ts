// Workload "assistant": the assistant flow's turn on the real server stack (SQLite, no HTTP),
// scripted instant model. Variants add one piece at a time so their cost shows as a ratio:
// `reply` (router + recall extraction with no keywords + one reply call), `tool` (+ one
// calculator round), `recall` (+ a full-text search of the conversation's growing transcript).
import { perTurn } from '../lib/meter.ts'; // first: it counts node:sqlite statements from here on
import { pino } from 'pino';
import { NO_LIMITS } from '../../src/channels/channel.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startServer } from '../../src/server.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { allConversations, driveTurns, turnFlags } from '../lib/drive.ts';
import { REPLY } from '../lib/turn-script.ts';
import { flags, report, summarize } from '../lib/stats.ts';

const opts = { ...turnFlags(), ...flags({ variant: 'reply' }) };
const role = (content: string) => /^\[assistant:(\w+)\]/.exec(content)?.[1];

const provider = createScriptedProvider(
  (request) => {
    const last = request.messages.at(-1)!;
    switch (role(request.messages[0]!.content)) {
      case 'route':
        return { text: 'life' };
      case 'recall':
        return { text: opts.variant === 'recall' ? '{"keywords": ["milk", "dentist"]}' : '{"keywords": []}' };
      default:
        if (opts.variant !== 'reply' && last.role === 'user' && !last.content.startsWith('['))
          return { toolCalls: [{ name: 'calculator', arguments: { expression: '1250 * 12' } }] };
        return { text: REPLY };
    }
  },
  { recordRequests: false },
);

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
const conversations = Array.from({ length: allConversations(opts) }, (_, index) => ({
  id: `c${index}`,
  participantId: null,
  flow: 'assistant',
  channel: 'web',
  state: 'ACTIVE',
  subState: null,
  version: 1,
  createdAt: now,
  updatedAt: now,
}));
for (const conversation of conversations) await server.store.insertConversation(conversation);

const { latencies, seconds, writes } = await driveTurns(
  opts,
  async (conversation, index) => {
    const outcome = await server.inbound.receiveForConversation(
      conversations[conversation]!,
      `message ${index}: buy oat milk, and the dentist is on Friday`,
      null,
    );
    if (outcome.status !== 'queued') throw new Error(`not queued: ${outcome.status}`);
    await outcome.turn;
  },
  { settle: () => server.engine.idle() },
);
await server.close();
report({
  variant: opts.variant,
  turns: latencies.length,
  seconds,
  turnsPerSecond: latencies.length / seconds,
  latencyMs: summarize(latencies),
  perTurn: perTurn(writes, latencies.length),
});
