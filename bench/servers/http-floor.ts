// The HTTP floor: the least a durable messaging server must do, in one process (node:http,
// node:sqlite). Each inbound POST commits its inbox row before the 202; the conversation's turn
// (the turn workload's scripted model: two tool calls, then the reply) runs after it, in order
// per conversation, and commits once; the reply is POSTed to the webhook and marked sent.
// Env: PORT, DATABASE (a file path), OUTBOUND_WEBHOOK_URL. Prints one JSON line when listening.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { PROFILE_ARGS, REPLY, SCHEDULER_ARGS, wantsTools } from '../lib/turn-script.ts';

const db = new DatabaseSync(process.env.DATABASE!);
db.exec(`pragma journal_mode = wal; pragma synchronous = normal;
  create table conversations (id integer primary key, phone text not null unique);
  create table inbox (id integer primary key, message_id text unique, conversation_id integer not null,
    text text not null, status text not null, received_at integer not null, processed_at integer);
  create table messages (conversation_id integer not null, seq integer not null, role text not null,
    text text not null, turn_id integer, created_at integer not null, primary key (conversation_id, seq));
  create table tool_calls (id integer primary key, turn_id integer not null, name text not null,
    arguments text not null, result text not null, created_at integer not null);
  create table profiles (conversation_id integer primary key, fields text not null);
  create table turns (id integer primary key, conversation_id integer not null, inbox_id integer not null,
    status text not null, model_calls integer not null, started_at integer not null);
  create table outbox (id integer primary key, conversation_id integer not null, recipient text not null,
    text text not null, status text not null, created_at integer not null, sent_at integer);`);
const sql = {
  enroll: db.prepare('insert into conversations (phone) values (?) on conflict (phone) do nothing'),
  conversation: db.prepare('select id from conversations where phone = ?'),
  acknowledge: db.prepare(
    "insert into inbox (message_id, conversation_id, text, status, received_at) values (?, ?, ?, 'queued', ?) " +
      'on conflict (message_id) do nothing',
  ),
  history: db.prepare('select seq, role, text from messages where conversation_id = ? order by seq desc limit 50'),
  profile: db.prepare('select fields from profiles where conversation_id = ?'),
  message: db.prepare(
    'insert into messages (conversation_id, seq, role, text, turn_id, created_at) values (?, ?, ?, ?, ?, ?)',
  ),
  turn: db.prepare(
    "insert into turns (conversation_id, inbox_id, status, model_calls, started_at) values (?, ?, 'completed', ?, ?)",
  ),
  toolCall: db.prepare('insert into tool_calls (turn_id, name, arguments, result, created_at) values (?, ?, ?, ?, ?)'),
  saveProfile: db.prepare(
    'insert into profiles (conversation_id, fields) values (?, ?) on conflict (conversation_id) do update set ' +
      'fields = excluded.fields',
  ),
  outbox: db.prepare(
    "insert into outbox (conversation_id, recipient, text, status, created_at) values (?, ?, ?, 'pending', ?)",
  ),
  processed: db.prepare("update inbox set status = 'processed', processed_at = ? where id = ?"),
  sent: db.prepare("update outbox set status = 'sent', sent_at = ? where id = ?"),
};

type Message = { role: string; content: string };
type ToolCall = { name: string; args: Record<string, string> };
const model = (messages: Message[]): { text?: string; toolCalls: ToolCall[] } =>
  wantsTools(messages.at(-1)!.role)
    ? {
        toolCalls: [
          { name: 'save_user_profile', args: PROFILE_ARGS },
          { name: 'scheduler', args: SCHEDULER_ARGS },
        ],
      }
    : { text: REPLY, toolCalls: [] };

/** The turn of one inbox row: the scripted tool loop, then one commit of everything it did. */
function runTurn(conversationId: number, inboxId: number, text: string): { outboxId: number; reply: string } {
  const startedAt = Date.now();
  const rows = (sql.history.all(conversationId) as Array<{ seq: number; role: string; text: string }>).reverse();
  const profile = JSON.parse(
    (sql.profile.get(conversationId) as { fields: string } | undefined)?.fields ?? '{}',
  ) as Record<string, string>;
  const messages: Message[] = [
    ...rows.map((row) => ({ role: row.role, content: row.text })),
    { role: 'user', content: text },
  ];
  const executed: Array<ToolCall & { result: string }> = [];
  let answer = model(messages);
  let modelCalls = 1;
  for (; answer.toolCalls.length > 0; modelCalls++) {
    for (const call of answer.toolCalls) {
      if (call.name === 'save_user_profile') Object.assign(profile, call.args);
      const result = call.name === 'scheduler' ? 'No schedules.' : 'Saved.';
      executed.push({ ...call, result });
      messages.push({ role: 'tool', content: result });
    }
    answer = model(messages);
  }
  const reply = answer.text!;
  const now = Date.now();
  const seq = (rows.at(-1)?.seq ?? 0) + 1;
  db.exec('begin immediate');
  try {
    const turnId = Number(sql.turn.run(conversationId, inboxId, modelCalls, startedAt).lastInsertRowid);
    sql.message.run(conversationId, seq, 'user', text, turnId, now);
    sql.message.run(conversationId, seq + 1, 'assistant', reply, turnId, now);
    for (const call of executed) sql.toolCall.run(turnId, call.name, JSON.stringify(call.args), call.result, now);
    sql.saveProfile.run(conversationId, JSON.stringify(profile));
    const outboxId = Number(sql.outbox.run(conversationId, '', reply, now).lastInsertRowid);
    sql.processed.run(now, inboxId);
    db.exec('commit');
    return { outboxId, reply };
  } catch (error) {
    db.exec('rollback');
    throw error;
  }
}

async function deliver(phone: string, outboxId: number, reply: string): Promise<void> {
  const response = await fetch(process.env.OUTBOUND_WEBHOOK_URL!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': `out-${outboxId}` },
    body: JSON.stringify({
      id: `out-${outboxId}`,
      to: phone,
      kind: 'text',
      text: reply,
      created_at: new Date().toISOString(),
    }),
  });
  await response.body?.cancel();
  if (response.ok) sql.sent.run(Date.now(), outboxId);
}

/** Each conversation's turns run one after another, in arrival order. */
const queues = new Map<string, Promise<void>>();
function enqueue(phone: string, work: () => Promise<void>): void {
  const next = (queues.get(phone) ?? Promise.resolve())
    .then(work)
    .catch((error: unknown) => void process.stderr.write(`turn failed: ${String(error)}\n`));
  queues.set(phone, next);
  void next.then(() => queues.get(phone) === next && queues.delete(phone));
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  let raw = '';
  for await (const chunk of request) raw += chunk;
  if (request.url === '/health') return void response.writeHead(200).end('{"status":"ok"}');
  const body = JSON.parse(raw || '{}') as { phone_number?: string; from?: string; text?: string; message_id?: string };
  if (request.method === 'POST' && request.url === '/conversation/participants') {
    sql.enroll.run(body.phone_number!);
    return void response.writeHead(201, { 'content-type': 'application/json' }).end('{}');
  }
  if (request.method === 'POST' && request.url === '/conversation/inbound') {
    const conversation = sql.conversation.get(body.from!) as { id: number } | undefined;
    if (!conversation) return void response.writeHead(404).end();
    const { changes, lastInsertRowid } = sql.acknowledge.run(body.message_id!, conversation.id, body.text!, Date.now());
    response.writeHead(changes ? 202 : 200, { 'content-type': 'application/json' }).end('{"status":"queued"}');
    if (changes) {
      enqueue(body.from!, async () => {
        const { outboxId, reply } = runTurn(conversation.id, Number(lastInsertRowid), body.text!);
        await deliver(body.from!, outboxId, reply);
      });
    }
    return;
  }
  response.writeHead(404).end();
}

const server = createServer(
  (request, response) => void handle(request, response).catch(() => response.writeHead(500).end()),
);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => (db.close(), process.exit(0)));
  server.closeAllConnections();
});
