// The floor: a minimal hand-written loop with the same model function, one JSON row per conversation.
import { perTurn } from '../lib/meter.ts'; // first: it counts node:sqlite statements from here on
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { PROFILE_ARGS, REPLY, SCHEDULER_ARGS, wantsTools } from '../lib/turn-script.ts';
import { driveTurns, turnFlags } from '../lib/drive.ts';
import { report, summarize } from '../lib/stats.ts';

const opts = turnFlags();
const file = join(mkdtempSync(join(tmpdir(), 'bench-floor-')), 'floor.sqlite');
const db = new DatabaseSync(file);
db.exec(
  'pragma journal_mode = wal; pragma synchronous = normal; create table conversations (id text primary key, ' +
    'state text not null)',
);
const read = db.prepare('select state from conversations where id = ?');
const write = db.prepare(
  'insert into conversations (id, state) values (?, ?) on conflict (id) do update set state = excluded.state',
);

type Message = { role: string; content: string };
const model = async (messages: Message[]) =>
  wantsTools(messages.at(-1)!.role)
    ? {
        toolCalls: [
          { name: 'save_user_profile', args: PROFILE_ARGS },
          { name: 'scheduler', args: SCHEDULER_ARGS },
        ],
      }
    : { text: REPLY, toolCalls: [] };

async function turn(id: string, text: string): Promise<void> {
  const row = read.get(id) as { state: string } | undefined;
  const state = row
    ? (JSON.parse(row.state) as { messages: Message[]; profile: Record<string, string> })
    : { messages: [], profile: {} };
  state.messages.push({ role: 'user', content: text });
  for (;;) {
    const answer = await model(state.messages);
    if (answer.toolCalls.length === 0) {
      state.messages.push({ role: 'assistant', content: answer.text! });
      break;
    }
    for (const call of answer.toolCalls) {
      if (call.name === 'save_user_profile') Object.assign(state.profile, call.args);
      state.messages.push({ role: 'tool', content: call.name === 'scheduler' ? 'No schedules.' : 'Saved.' });
    }
  }
  write.run(id, JSON.stringify(state));
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
