import { DatabaseSync, StatementSync } from 'node:sqlite';
import { NO_LIMITS } from '../src/channels/channel.ts';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.ts';
import { createScriptedProvider } from '../src/llm/scripted-provider.ts';
import { startServer } from '../src/server.ts';
import { tempSqliteUrl } from '../test/kit/test-server.ts';
import { PROFILE_ARGS, REPLY, SCHEDULER_ARGS, wantsTools } from './lib/turn-script.ts';
const stats = new Map<string, { n: number; ms: number }>();
let on = false;
const origPrepare = DatabaseSync.prototype.prepare;
DatabaseSync.prototype.prepare = function (sql: string) {
  const st = origPrepare.call(this, sql) as StatementSync;
  const key = sql.replace(/\s+/g, ' ').slice(0, 110);
  for (const m of ['run', 'all', 'get'] as const) {
    const f = (st as any)[m].bind(st);
    (st as any)[m] = (...a: unknown[]) => { const t = performance.now(); try { return f(...a); } finally { if (on) { const s = stats.get(key) ?? { n: 0, ms: 0 }; s.n++; s.ms += performance.now() - t; stats.set(key, s); } } };
  }
  return st;
};
const provider = createScriptedProvider((request) => {
  const last = request.messages.at(-1)!;
  if (wantsTools(last.role) && !last.content.startsWith('[')) return { toolCalls: [{ name: 'save_user_profile', arguments: PROFILE_ARGS }, { name: 'scheduler', arguments: SCHEDULER_ARGS }] };
  return { text: REPLY };
}, { recordRequests: false });
const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATABASE_URL: tempSqliteUrl(), LOG_LEVEL: 'silent', CLOCK: 'virtual' });
const channel = { name: 'webhook', capabilities: NO_LIMITS, send: async () => undefined };
const server = await startServer(config, pino({ level: 'silent' }), { provider, channel });
const N = 100;
for (let c = 0; c < N; c++) {
  const phone = `+1416${String(5_000_000 + c).padStart(7, '0')}`;
  await server.store.insertParticipant({ id: `p${c}`, phoneNumber: phone, name: null, gender: null, ethnicity: null, background: null, timezone: 'America/Toronto', status: 'active', debug: false, enrolledAt: new Date(), createdAt: new Date(), updatedAt: new Date() });
  await server.store.insertConversation({ id: `c${c}`, participantId: `p${c}`, flow: 'habit-coach', channel: 'webhook', state: 'CONVERSATION_ACTIVE', subState: 'INTAKE', version: 0, createdAt: new Date(), updatedAt: new Date() });
}
on = true;
const t0 = performance.now();
let turns = 0;
for (let c = 0; c < N; c++) for (let i = 0; i < 10; i++) {
  const phone = `+1416${String(5_000_000 + c).padStart(7, '0')}`;
  const o = await server.inbound.receive({ channel: 'http', sender: phone, text: `message ${i}`, channelMessageId: null });
  if (o.status !== 'queued') throw new Error('nq');
  await o.turn; turns++;
}
await server.engine.idle();
const wall = performance.now() - t0;
on = false;
let total = 0, count = 0;
for (const s of stats.values()) { total += s.ms; count += s.n; }
console.log(`turns ${turns} wall ${(wall / turns).toFixed(3)} ms/turn; sqlite ${(total / turns).toFixed(3)} ms/turn in ${(count / turns).toFixed(1)} statements/turn`);
for (const [k, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) console.log((s.ms / turns).toFixed(3).padStart(7), (s.n / turns).toFixed(2).padStart(5), k);
await server.close();
