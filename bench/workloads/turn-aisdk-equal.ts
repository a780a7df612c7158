// Peer at equal work: the same AI SDK tool loop as turn-aisdk.ts, persisting what PromptPipe
// persists per turn — the inbox row committed first (the acknowledgement), then one transaction
// with the user message and the reply as transcript rows, one audit row per tool call, the
// profile, a turn record, an outbox row and the inbox status. The model reads the last 50
// transcript rows, as PromptPipe's does.
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
const file = join(mkdtempSync(join(tmpdir(), 'bench-aisdk-equal-')), 'aisdk-equal.sqlite');
const db = new DatabaseSync(file);
db.exec(`pragma journal_mode = wal; pragma synchronous = normal;
  create table inbox (id text primary key, conversation_id text not null, text text not null, status text not null,
    received_at integer not null, processed_at integer);
  create table messages (conversation_id text not null, seq integer not null, role text not null, text text not null,
    turn_id text, created_at integer not null, primary key (conversation_id, seq));
  create table tool_calls (id text primary key, turn_id text not null, conversation_id text not null,
    name text not null, arguments text not null, result text not null, created_at integer not null);
  create table profiles (conversation_id text primary key, fields text not null);
  create table turns (id text primary key, conversation_id text not null, inbox_id text not null,
    status text not null, model_calls integer not null, total_ms real not null, started_at integer not null);
  create table outbox (id text primary key, conversation_id text not null, text text not null, status text not null,
    created_at integer not null);`);
const sql = {
  acknowledge: db.prepare(
    "insert into inbox (id, conversation_id, text, status, received_at) values (?, ?, ?, 'queued', ?)",
  ),
  history: db.prepare('select seq, role, text from messages where conversation_id = ? order by seq desc limit 50'),
  profile: db.prepare('select fields from profiles where conversation_id = ?'),
  message: db.prepare(
    'insert into messages (conversation_id, seq, role, text, turn_id, created_at) values (?, ?, ?, ?, ?, ?)',
  ),
  toolCall: db.prepare(
    'insert into tool_calls (id, turn_id, conversation_id, name, arguments, result, created_at) values (?, ?, ' +
      '?, ?, ?, ?, ?)',
  ),
  saveProfile: db.prepare(
    'insert into profiles (conversation_id, fields) values (?, ?) on conflict (conversation_id) do update set ' +
      'fields = excluded.fields',
  ),
  turn: db.prepare(
    'insert into turns (id, conversation_id, inbox_id, status, model_calls, total_ms, started_at) ' +
      "values (?, ?, ?, 'completed', ?, ?, ?)",
  ),
  outbox: db.prepare(
    "insert into outbox (id, conversation_id, text, status, created_at) values (?, ?, ?, 'pending', ?)",
  ),
  processed: db.prepare("update inbox set status = 'processed', processed_at = ? where id = ?"),
};

let ids = 0;
async function turn(conversationId: string, text: string): Promise<void> {
  const started = performance.now();
  const n = ++ids;
  const inboxId = `in${n}`;
  sql.acknowledge.run(inboxId, conversationId, text, Date.now());

  const rows = (sql.history.all(conversationId) as Array<{ seq: number; role: string; text: string }>).reverse();
  const profile: Record<string, string> = JSON.parse(
    (sql.profile.get(conversationId) as { fields: string } | undefined)?.fields ?? '{}',
  );
  const messages: ModelMessage[] = [
    ...rows.map((row) => ({ role: row.role as 'user' | 'assistant', content: row.text })),
    { role: 'user', content: text },
  ];
  const result = await runAiSdkTurn(messages, profile);

  const turnId = `t${n}`;
  const now = Date.now();
  const seq = (rows.at(-1)?.seq ?? 0) + 1;
  db.exec('begin immediate');
  try {
    sql.message.run(conversationId, seq, 'user', text, turnId, now);
    sql.message.run(conversationId, seq + 1, 'assistant', result.text, turnId, now);
    for (const step of result.steps) {
      for (const call of step.toolCalls) {
        const output = step.toolResults.find((toolResult) => toolResult.toolCallId === call.toolCallId)?.output;
        sql.toolCall.run(
          `${turnId}-${call.toolCallId}`,
          turnId,
          conversationId,
          call.toolName,
          JSON.stringify(call.input),
          JSON.stringify(output ?? null),
          now,
        );
      }
    }
    sql.saveProfile.run(conversationId, JSON.stringify(profile));
    sql.turn.run(turnId, conversationId, inboxId, result.steps.length, performance.now() - started, now);
    sql.outbox.run(`out${n}`, conversationId, result.text, now);
    sql.processed.run(now, inboxId);
    db.exec('commit');
  } catch (error) {
    db.exec('rollback');
    throw error;
  }
}

const { latencies, seconds, writes } = await driveTurns(opts, (conversation, index) =>
  turn(`c${conversation}`, `message ${index}`),
);
// Every turn left its two transcript rows and two audit rows.
const check = db
  .prepare(
    "select (select count(*) from messages where conversation_id = 'c0') as messages, " +
      "(select count(*) from tool_calls where conversation_id = 'c0') as calls",
  )
  .get() as { messages: number; calls: number };
if (check.messages !== opts.turns * 2 || check.calls !== opts.turns * 2)
  throw new Error(`the equal-work peer did not persist what it should: ${JSON.stringify(check)}`);
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
