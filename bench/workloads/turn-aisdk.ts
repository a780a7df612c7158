// Peer: the Vercel AI SDK tool loop (generateText + a mock model), the message array persisted per conversation.
import { perTurn } from '../lib/meter.ts'; // first: it counts node:sqlite statements from here on
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { ModelMessage } from 'ai';
import { runAiSdkTurn } from '../lib/aisdk-turn.ts';
import { driveTurns, turnFlags } from '../lib/drive.ts';
import { report, summarize } from '../lib/stats.ts';

const opts = turnFlags();
const file = join(mkdtempSync(join(tmpdir(), 'bench-aisdk-')), 'aisdk.sqlite');
const db = new DatabaseSync(file);
db.exec(
  'pragma journal_mode = wal; pragma synchronous = normal; create table conversations (id text primary key, ' +
    'messages text not null, profile text not null)',
);
const read = db.prepare('select messages, profile from conversations where id = ?');
const write = db.prepare(
  'insert into conversations (id, messages, profile) values (?, ?, ?) on conflict (id) do update set messages ' +
    '= excluded.messages, profile = excluded.profile',
);

async function turn(id: string, text: string): Promise<void> {
  const row = read.get(id) as { messages: string; profile: string } | undefined;
  const messages: ModelMessage[] = row ? JSON.parse(row.messages) : [];
  const profile: Record<string, string> = row ? JSON.parse(row.profile) : {};
  messages.push({ role: 'user', content: text });
  const result = await runAiSdkTurn(messages, profile);
  messages.push(...result.response.messages);
  write.run(id, JSON.stringify(messages), JSON.stringify(profile));
}

const { latencies, seconds, writes } = await driveTurns(opts, (conversation, index) =>
  turn(`c${conversation}`, `message ${index}`),
);
db.close();
const databaseMiB =
  [file, `${file}-wal`].reduce((sum, path) => sum + (statSync(path, { throwIfNoEntry: false })?.size ?? 0), 0) /
  2 ** 20;
report({
  turns: latencies.length,
  seconds,
  turnsPerSecond: latencies.length / seconds,
  latencyMs: summarize(latencies),
  databaseMiB,
  perTurn: perTurn(writes, latencies.length),
});
