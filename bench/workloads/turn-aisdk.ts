// Peer: the Vercel AI SDK tool loop (generateText + a mock model), the message array persisted per conversation.
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { generateText, stepCountIs, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { PROFILE_ARGS, REPLY, SCHEDULER_ARGS, wantsTools } from '../lib/turn-script.ts';
import { driveTurns, turnFlags } from '../lib/drive.ts';
import { report, summarize } from '../lib/stats.ts';

const opts = turnFlags();
const file = join(mkdtempSync(join(tmpdir(), 'bench-aisdk-')), 'aisdk.sqlite');
const db = new DatabaseSync(file);
db.exec('pragma journal_mode = wal; pragma synchronous = normal; create table conversations (id text primary key, messages text not null, profile text not null)');
const read = db.prepare('select messages, profile from conversations where id = ?');
const write = db.prepare('insert into conversations (id, messages, profile) values (?, ?, ?) on conflict (id) do update set messages = excluded.messages, profile = excluded.profile');

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10, text: 10, reasoning: 0 } };
let calls = 0;
const model = new MockLanguageModelV3({
  doGenerate: async (options) => {
    const last = options.prompt.at(-1)!;
    if (wantsTools(last.role)) {
      calls += 1;
      return {
        content: [
          { type: 'tool-call', toolCallId: `a${calls}`, toolName: 'save_user_profile', input: JSON.stringify(PROFILE_ARGS) },
          { type: 'tool-call', toolCallId: `b${calls}`, toolName: 'scheduler', input: JSON.stringify(SCHEDULER_ARGS) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }
    return { content: [{ type: 'text', text: REPLY }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});
// The mock records every call; a benchmark must not grow with them.
const generate = model.doGenerate;
model.doGenerate = async (options) => {
  const result = await generate(options);
  model.doGenerateCalls.length = 0;
  return result;
};

async function turn(id: string, text: string): Promise<void> {
  const row = read.get(id) as { messages: string; profile: string } | undefined;
  const messages: ModelMessage[] = row ? JSON.parse(row.messages) : [];
  const profile: Record<string, string> = row ? JSON.parse(row.profile) : {};
  messages.push({ role: 'user', content: text });
  const result = await generateText({
    model,
    messages,
    stopWhen: stepCountIs(10),
    tools: {
      save_user_profile: tool({
        inputSchema: z.object({ habit_domain: z.string().optional(), motivational_frame: z.string().optional(), preferred_time: z.string().optional() }),
        execute: async (input) => {
          Object.assign(profile, input);
          return 'Saved.';
        },
      }),
      scheduler: tool({ inputSchema: z.object({ action: z.enum(['create', 'list', 'delete']) }), execute: async () => 'No schedules.' }),
    },
  });
  messages.push(...result.response.messages);
  write.run(id, JSON.stringify(messages), JSON.stringify(profile));
}

const { latencies, seconds } = await driveTurns(opts, (conversation, index) => turn(`c${conversation}`, `message ${index}`));
db.close();
const databaseMiB = [file, `${file}-wal`].reduce((sum, path) => sum + (statSync(path, { throwIfNoEntry: false })?.size ?? 0), 0) / 2 ** 20;
report({ turns: latencies.length, seconds, turnsPerSecond: latencies.length / seconds, latencyMs: summarize(latencies), databaseMiB });
