// Model chunk → WebSocket frame: how long a streamed token takes to reach a client, and how many
// events per second one conversation's stream carries.
import { NO_LIMITS } from '../../src/channels/channel.ts';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.ts';
import type { LlmProvider } from '../../src/llm/llm-provider.ts';
import { startServer } from '../../src/server.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { flags, report, round, summarize } from '../lib/stats.ts';

const opts = flags({ turns: 20, tokens: 200, gapMs: 2 });
const emittedAt = new Map<string, number>();
let turn = 0;

/** Streams `tokens` numbered pieces per reply, `gapMs` apart (0 = as fast as possible). */
const provider: LlmProvider = {
  name: 'bench',
  model: 'bench',
  async complete(request, options = {}) {
    const greeting = request.messages.at(-1)?.content.startsWith('[');
    const pieces = greeting ? ['Hi!'] : Array.from({ length: opts.tokens }, (_, index) => `<${turn}.${index}>`);
    turn += greeting ? 0 : 1;
    for (const piece of pieces) {
      if (opts.gapMs > 0) await new Promise((resolve) => setTimeout(resolve, opts.gapMs));
      emittedAt.set(piece, performance.now());
      options.onTextDelta?.(piece);
    }
    return { text: pieces.join(''), toolCalls: [], finishReason: 'stop', model: 'bench' };
  },
};

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
const created = await (
  await fetch(`${server.url}/conversation/participants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ phone_number: '+14165550100' }),
  })
).json();
const id = (created as { result: { id: string } }).result.id;
await server.engine.idle();

const relay: number[] = [];
let received = 0;
let finals = 0;
const socket = new WebSocket(`${server.url.replace('http', 'ws')}/api/conversations/${id}/socket`);
socket.addEventListener('message', (message) => {
  const now = performance.now();
  const event = JSON.parse(String(message.data));
  received += 1;
  if (event.type === 'token') {
    const sent = emittedAt.get(event.text);
    if (sent !== undefined) relay.push(now - sent);
  }
  if (event.type === 'final') finals += 1;
});
await new Promise((resolve) => socket.addEventListener('open', resolve, { once: true }));

async function runTurns(count: number): Promise<number> {
  const target = finals + count;
  const started = performance.now();
  for (let index = 0; index < count; index++) {
    await fetch(`${server.url}/api/conversations/${id}/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: `go ${index}` }),
    });
  }
  while (finals < target) await new Promise((resolve) => setTimeout(resolve, 5));
  return performance.now() - started;
}

await runTurns(opts.turns);
const relayMs = summarize(relay);
// Throughput: the same turns with no pause between tokens.
opts.gapMs = 0;
const before = received;
const elapsed = await runTurns(opts.turns);
socket.close();
await server.close();
report({ tokens: relayMs.count, relayMs, eventsPerSecond: round(((received - before) / elapsed) * 1000, 0) });
