// @requires postgres
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { lastUserText } from '../kit/fake-openai-server.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// A turn's writes commit as one unit whose fences are checked on the answers of statements sent
// together with the writes (decision 020). When a fence fails, none of the turn's writes stay:
// here the fences fail for real, while the model is answering.
const PHONE = '+14165550188';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const schemas = pgSchemas('unit_of_work');
const sqlite = () => ({ DATABASE_URL: tempSqliteUrl() });
const postgres = () => schemas.next();
afterAll(() => schemas.dropAll());

/** A model that runs `meanwhile` when asked about `trigger`, then calls a tool and replies. */
function modelThat(trigger: string, meanwhile: () => Promise<void>) {
  return createScriptedProvider(async (request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: 'Saved your habit.' };
    const said = lastUserText(request);
    if (said !== trigger) return { text: `echo: ${said}` };
    await meanwhile();
    return { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }] };
  });
}

async function enrol(): Promise<string> {
  const id = (await server!.request('POST', '/conversation/participants', { phone_number: PHONE })).body.result.id;
  await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'greeting' });
  return id;
}

const historyOf = async (id: string) =>
  (
    (await server!.request('GET', `/conversation/participants/${id}/history`)).body.result.messages as Array<{
      role: string;
      text: string;
    }>
  ).map((message) => [message.role, message.text]);

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres],
])('a turn whose fence fails while the model answers (%s)', (_name, database) => {
  it('a participant paused meanwhile: the message is kept, nothing the turn did is', async () => {
    let id = '';
    const provider = modelThat('I want to walk more', async () => {
      await server!.request('PUT', `/conversation/participants/${id}`, { status: 'paused' });
    });
    server = await startTestServer(database(), { provider });
    id = await enrol();
    const accepted = await server.request('POST', '/conversation/inbound', {
      from: PHONE,
      text: 'I want to walk more',
    });
    await waitFor(async () => (await server!.store.getInbox(accepted.body.result.inbox_id))?.status !== 'pending', {
      what: 'the message settled',
    });
    await server.engine.idle();
    expect(await server.store.getInbox(accepted.body.result.inbox_id)).toMatchObject({ status: 'ignored' });
    expect((await historyOf(id)).slice(1)).toEqual([['user', 'I want to walk more']]);
    const state = (await server.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.profile?.habit_domain ?? null).toBeNull();
    const turns = (await server.request('GET', `/conversation/participants/${id}/turns`)).body.result;
    expect(turns.filter((t: { trigger: string }) => t.trigger === 'message')).toEqual([]);
    expect(server.sink.to(PHONE)).toHaveLength(1); // the greeting only
  });

  it('its message answered elsewhere meanwhile: nothing the turn did is kept', async () => {
    let inboxId = '';
    const provider = modelThat('I want to walk more', async () => {
      // What another process whose lease outlived ours would have done.
      await waitFor(() => inboxId !== '', { what: 'the acknowledgement' });
      await server!.store.completeInbox(inboxId, 'processed', new Date());
    });
    server = await startTestServer(database(), { provider });
    const id = await enrol();
    const accepted = await server.request('POST', '/conversation/inbound', {
      from: PHONE,
      text: 'I want to walk more',
    });
    inboxId = accepted.body.result.inbox_id;
    await waitFor(() => provider.requests.length >= 3, { what: 'the model asked' });
    await server.engine.idle();
    expect((await historyOf(id)).slice(1)).toEqual([]);
    const state = (await server.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.profile?.habit_domain ?? null).toBeNull();
    expect(server.sink.to(PHONE)).toHaveLength(1);
  });

  it('a message appended meanwhile (a note from the team): the turn numbers its own after it, once', async () => {
    let conversationId = '';
    let notes = 0;
    const provider = modelThat('I want to walk more', async () => {
      notes += 1;
      const note = { conversationId, role: 'assistant', kind: 'text', poll: null, turnId: null } as const;
      await server!.store.appendMessages([
        { ...note, id: `msg_note_${notes}`, text: 'A note from the team', source: 'operator', createdAt: new Date() },
      ]);
    });
    server = await startTestServer(database(), { provider });
    const id = await enrol();
    conversationId = (await server.store.findConversationByParticipant(id))!.id;
    await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'I want to walk more' });
    await waitFor(() => server!.sink.to(PHONE).length === 2, { what: 'the reply' });
    await server.engine.idle();
    expect(notes).toBe(1); // the model ran once: only the commit ran again, numbered by the database
    expect((await historyOf(id)).slice(1)).toEqual([
      ['assistant', 'A note from the team'],
      ['user', 'I want to walk more'],
      ['assistant', 'Saved your habit.'],
    ]);
    const seqs = (await server.store.listMessages(conversationId)).map((message) => message.seq);
    expect(seqs.length).toBeGreaterThanOrEqual(4); // the greeting, the note, the message, the reply
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    const state = (await server.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.profile?.habit_domain).toBe('walking');
  });
});
