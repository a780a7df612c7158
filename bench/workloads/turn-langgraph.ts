// Peer: LangGraph.js — a StateGraph (model node ⇄ ToolNode) with a scripted model node; the
// message list persisted per conversation to node:sqlite (the official SQLite checkpointer needs
// the better-sqlite3 native addon, which this project does not build).
import { perTurn } from '../lib/meter.ts'; // first: it counts node:sqlite statements from here on
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import {
  AIMessage,
  HumanMessage,
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
} from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { driveTurns, turnFlags } from '../lib/drive.ts';
import { PROFILE_ARGS, REPLY, SCHEDULER_ARGS, wantsTools } from '../lib/turn-script.ts';
import { report, summarize } from '../lib/stats.ts';

const opts = turnFlags();
const file = join(mkdtempSync(join(tmpdir(), 'bench-langgraph-')), 'langgraph.sqlite');
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

/** Each conversation's profile while its turn runs (the tool finds it by the thread id). */
const profiles = new Map<string, Record<string, string>>();
const tools = [
  tool(
    async (input, config) => {
      Object.assign(profiles.get(String(config.configurable?.thread_id))!, input);
      return 'Saved.';
    },
    {
      name: 'save_user_profile',
      description: 'Save profile facts.',
      schema: z.object({
        habit_domain: z.string().optional(),
        motivational_frame: z.string().optional(),
        preferred_time: z.string().optional(),
      }),
    },
  ),
  tool(async () => 'No schedules.', {
    name: 'scheduler',
    description: 'Manage schedules.',
    schema: z.object({ action: z.enum(['create', 'list', 'delete']) }),
  }),
];

let calls = 0;
/** The same scripted model as every system: tool calls after a user message, the reply after tool results. */
function model(state: typeof MessagesAnnotation.State) {
  const last = state.messages.at(-1)!;
  if (wantsTools(last.getType() === 'human' ? 'user' : last.getType())) {
    calls += 1;
    return {
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [
            { id: `a${calls}`, name: 'save_user_profile', args: PROFILE_ARGS },
            { id: `b${calls}`, name: 'scheduler', args: SCHEDULER_ARGS },
          ],
        }),
      ],
    };
  }
  return { messages: [new AIMessage(REPLY)] };
}

const graph = new StateGraph(MessagesAnnotation)
  .addNode('model', model)
  .addNode('tools', new ToolNode(tools))
  .addEdge(START, 'model')
  .addConditionalEdges('model', (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END))
  .addEdge('tools', 'model')
  .compile();

async function turn(id: string, text: string): Promise<void> {
  const row = read.get(id) as { messages: string; profile: string } | undefined;
  const messages: BaseMessage[] = row ? mapStoredMessagesToChatMessages(JSON.parse(row.messages)) : [];
  profiles.set(id, row ? JSON.parse(row.profile) : {});
  const result = await graph.invoke(
    { messages: [...messages, new HumanMessage(text)] },
    { recursionLimit: 25, configurable: { thread_id: id } },
  );
  write.run(id, JSON.stringify(mapChatMessagesToStoredMessages(result.messages)), JSON.stringify(profiles.get(id)));
  profiles.delete(id);
}

const { latencies, seconds, writes } = await driveTurns(opts, (conversation, index) =>
  turn(`c${conversation}`, `message ${index}`),
);
// Every turn persisted its five messages (user, tool calls, two results, reply) and the profile.
const sample = read.get('c0') as { messages: string; profile: string };
if (JSON.parse(sample.messages).length !== opts.turns * 5 || JSON.parse(sample.profile).habit_domain !== 'walking')
  throw new Error('the LangGraph run did not persist what it should');
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
