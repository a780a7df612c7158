// @requires postgres
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { decideCall, readApprovals } from '../../src/flows/assistant/approvals.ts';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { EventClient } from '../kit/event-client.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// Approvals (issue #22, decision 022): a tool that changes things waits for a yes, durably; the
// answer comes from an operator's POST or from the person on their channel, across restarts.
let server: TestServer | undefined;
let client: EventClient | undefined;
afterEach(async () => {
  client?.close();
  await server?.close();
  server = client = undefined;
});

const marker = (request: LlmRequest) => /^\[assistant:(\w+)\]/.exec(request.messages[0]?.content ?? '')?.[1];
const lastUser = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

/**
 * A model that keeps a note on "note: …", deletes the note it is told the id of on "delete <id>",
 * and otherwise answers from the last tool result it got, or says what it heard.
 */
function model() {
  return createScriptedProvider((request): ScriptedStep => {
    const role = marker(request);
    if (role === 'route') return { text: 'life' };
    if (role === 'recall') return { text: '{"keywords": []}' };
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: `Result: ${last.content}` };
    const said = lastUser(request);
    if (said.startsWith('[The user')) return { text: 'Hello!' };
    if (said.startsWith('note: '))
      return { toolCalls: [{ name: 'add_note', arguments: { text: said.slice('note: '.length) } }] };
    const deletion = /^delete (\S+)$/.exec(said);
    if (deletion)
      return { text: 'Let me do that.', toolCalls: [{ name: 'delete_note', arguments: { id: deletion[1] } }] };
    return { text: `You said: ${said}` };
  });
}

type Database = Record<string, string>;
const sqlite = (): Database => ({ DATABASE_URL: tempSqliteUrl() });
const schemas = pgSchemas('approvals');
const postgres = (): Database => schemas.next();
afterAll(() => schemas.dropAll());

async function start(database: Database, provider = model()) {
  server = await startTestServer({ ...database, CLOCK: 'virtual' }, { provider });
  return provider;
}

async function openSession() {
  const started = await server!.request('POST', '/api/conversations', { flow: 'assistant' });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const id = started.body.result.id as string;
  await follow(id);
  await waitFor(() => client!.of('final').length === 1, { what: 'greeting' });
  return id;
}

async function follow(id: string) {
  client?.close();
  client = await EventClient.connect(server!.url, id, '?lastEventId=0');
}

const finals = () => client!.of('final').map((event) => String((event as { text: string }).text));

async function say(id: string, text: string): Promise<string> {
  const before = client!.of('final').length;
  expect((await server!.request('POST', `/api/conversations/${id}/message`, { text })).status).toBe(202);
  await waitFor(() => client!.of('final').length > before, { what: `reply to ${text}` });
  return finals().at(-1)!;
}

async function noteWithMilk(id: string) {
  await say(id, 'note: buy milk');
  const [note] = await server!.store.listNotes({ conversationId: id, person: null });
  expect(note?.text).toBe('buy milk');
  return note!;
}

/** Asks to delete the note and checks the turn ended with the question, the note untouched. */
async function askToDelete(id: string, noteId: string) {
  const asked = client!.of('approval_requested').length;
  const question = await say(id, `delete ${noteId}`);
  expect(question).toBe(
    'Let me do that.\n\nBefore I go ahead, I need your OK to: delete your note "buy milk".\n' +
      'Reply yes to go ahead, or no to leave it.',
  );
  // This turn's request, not one an earlier turn of the test made.
  const requests = client!.of('approval_requested') as Array<{ text: string; data: Record<string, unknown> }>;
  expect(requests).toHaveLength(asked + 1);
  const requested = requests.at(-1);
  expect(requested!.data).toMatchObject({
    tool: 'delete_note',
    arguments: { id: noteId },
    summary: 'delete your note "buy milk"',
  });
  expect(await server!.store.listNotes({ conversationId: id, person: null })).toHaveLength(1);
  return String(requested!.data.callId);
}

const decide = (id: string, callId: string, body: unknown) =>
  server!.request('POST', `/api/conversations/${id}/approvals/${callId}`, body);

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('assistant approvals across restarts (%s)', (_name, database) => {
  it('survives a restart between request and answer: the approved call runs, the model reads its result', async () => {
    const url = database();
    await start(url);
    const id = await openSession();
    const note = await noteWithMilk(id);
    const callId = await askToDelete(id, note.id);
    client!.close();
    await server!.close();

    const provider = await start(url);
    await follow(id);
    const listed = await server!.request('GET', `/api/conversations/${id}/approvals`);
    expect(listed.body.result.waiting).toEqual([
      expect.objectContaining({
        callId,
        tool: 'delete_note',
        summary: 'delete your note "buy milk"',
        status: 'pending',
      }),
    ]);
    const decided = await decide(id, callId, { approve: true });
    expect(decided.status, JSON.stringify(decided.body)).toBe(202);
    const answer = `Result: Deleted note ${note.id}.`;
    await waitFor(() => finals().at(-1) === answer, { what: 'the resumed reply' });

    expect(await server!.store.listNotes({ conversationId: id, person: null })).toEqual([]);
    // The model resumed from the stored dialogue: its request, the call, and the call's result.
    const resumed = provider.requests.filter((request) => marker(request) === 'reply').at(-1)!;
    expect(resumed.messages.slice(-3).map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(resumed.messages.at(-3)!.content).toBe(`delete ${note.id}`);
    const turns = await server!.store.listTurns(id);
    expect(turns.at(-1)).toMatchObject({ trigger: 'approval', status: 'completed' });
    const after = await server!.request('GET', `/api/conversations/${id}/approvals`);
    expect(after.body.result).toMatchObject({ waiting: [], decided: [{ callId, status: 'approved' }] });
  });

  it('resumes at start-up a reply whose approval was decided just before the process stopped', async () => {
    const url = database();
    await start(url);
    const id = await openSession();
    const note = await noteWithMilk(id);
    const callId = await askToDelete(id, note.id);
    // The decision committed; the process died before its resume turn ran.
    const decision = decideCall(readApprovals(await server!.store.getFlowState(id)), callId, true, new Date());
    expect(decision.kind).toBe('decided');
    await server!.store.saveFlowState(id, (decision as { state: unknown }).state, new Date());
    client!.close();
    await server!.close();

    await start(url);
    await waitFor(async () => (await server!.store.listNotes({ conversationId: id, person: null })).length === 0, {
      what: 'the owed resume',
    });
    await follow(id);
    await waitFor(() => finals().at(-1) === `Result: Deleted note ${note.id}.`, { what: 'the resumed reply' });
  });
});

describe('assistant approvals', () => {
  it('a denial reaches the model and nothing runs; a second, different answer is refused', async () => {
    const provider = await start(sqlite());
    const id = await openSession();
    const note = await noteWithMilk(id);
    const callId = await askToDelete(id, note.id);

    expect((await decide(id, callId, { approve: 'yes' })).body).toMatchObject({
      code: 'invalid_request',
      field: 'approve',
    });
    expect((await decide(id, 'call_unknown', { approve: true })).body).toMatchObject({
      code: 'not_found',
      field: 'callId',
    });
    const before = client!.of('final').length;
    expect((await decide(id, callId, { approve: false })).status).toBe(202);
    await waitFor(() => client!.of('final').length > before, { what: 'the resumed reply' });

    expect(finals().at(-1)).toBe('Result: Not run: the person did not approve it.');
    expect(provider.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: callId });
    expect(await server!.store.listNotes({ conversationId: id, person: null })).toHaveLength(1);
    const again = await decide(id, callId, { approve: true });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'approval_decided', field: 'approve' });
    expect((await decide(id, callId, { approve: false })).status).toBe(200); // a retried request
  });

  it('the person answers on their channel: yes runs the call, no does not, anything else drops it', async () => {
    await start(sqlite());
    const id = await openSession();
    const note = await noteWithMilk(id);

    await askToDelete(id, note.id);
    expect(await say(id, 'what time is it?')).toBe('You said: what time is it?');
    expect(await server!.store.listNotes({ conversationId: id, person: null })).toHaveLength(1);
    expect((await server!.request('GET', `/api/conversations/${id}/approvals`)).body.result.decided[0]).toMatchObject({
      status: 'dropped',
      decidedBy: 'person',
    });

    await say(id, `delete ${note.id}`);
    expect(await say(id, 'No, keep it.')).toBe('Result: Not run: the person did not approve it.');
    expect(await server!.store.listNotes({ conversationId: id, person: null })).toHaveLength(1);

    await say(id, `delete ${note.id}`);
    expect(await say(id, 'yes please')).toBe(`Result: Deleted note ${note.id}.`);
    expect(await server!.store.listNotes({ conversationId: id, person: null })).toEqual([]);
  });

  it('refuses approvals on a conversation of another flow', async () => {
    await start(sqlite());
    const started = await server!.request('POST', '/api/conversations', { flow: 'service-desk' });
    const response = await server!.request('GET', `/api/conversations/${started.body.result.id}/approvals`);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'not_found', field: 'id' });
  });
});
