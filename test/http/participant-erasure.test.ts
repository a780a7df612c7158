// @requires postgres
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { ERASED_TICKET_REASON } from '../../src/store/participant-erasure.ts';
import { scanDatabase } from '../kit/database-scan.ts';
import { EventClient } from '../kit/event-client.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// A participant who withdraws is deleted with DELETE /conversation/participants/{id}, and the team
// tells its ethics board their personal data is gone (decision 024): their number, name and words
// are then in no table, through the real services (the desk's call-back tickets included), on
// either store; and a turn in flight in one of their conversations finishes before they go.
const PHONE = '+14165550142';
const NAME = 'Wilhelmina Quorvex';
const WORD = 'zorbleflax';
const NEEDLES = [PHONE, PHONE.slice(1), 'Quorvex', WORD];
const schemas = pgSchemas('erasure');
let server: TestServer | undefined;
let clients: EventClient[] = [];
/** Lets a model call held by a test go, so that a failing test still shuts its server down. */
let releaseHeld: (() => void) | undefined;
afterEach(async () => {
  releaseHeld?.();
  releaseHeld = undefined;
  for (const client of clients) client.close();
  clients = [];
  await server?.close();
  server = undefined;
});
afterAll(() => schemas.dropAll());

const tickets = () =>
  server!.store
    .extend((ctx) => ({ all: () => ctx.db.selectFrom('crm_tickets').selectAll().orderBy('created_at').execute() }))
    .ops.all();

/** A web session for `caller`, watched; `say` resolves with the reply's text. */
async function session(flow: string, caller: Record<string, string>) {
  const started = await server!.request('POST', '/api/conversations', { flow, caller });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const id = started.body.result.id as string;
  const client = await EventClient.connect(server!.url, id, '?lastEventId=0');
  clients.push(client);
  const finals = () => client.of('final').map((event) => String((event as { text?: string }).text));
  await waitFor(() => finals().length === 1, { what: 'the greeting' });
  const send = (text: string) => server!.request('POST', `/api/conversations/${id}/message`, { text });
  const say = async (text: string) => {
    const before = finals().length;
    expect((await send(text)).status).toBe(202);
    await waitFor(() => finals().length > before, { what: `reply to ${text}` });
    return finals().at(-1)!;
  };
  return { id, client, send, say, finals };
}

/** Says `text` from the participant's phone over the HTTP channel; resolves with the reply. */
async function fromPhone(text: string): Promise<string> {
  const before = server!.sink.to(PHONE).length;
  expect((await server!.request('POST', '/conversation/inbound', { from: PHONE, text })).status).toBe(202);
  await waitFor(() => server!.sink.to(PHONE).length > before, { what: `reply to ${text}` });
  return server!.sink.to(PHONE).at(-1)!.text;
}

describe.each([
  ['SQLite', () => ({})],
  ['PostgreSQL', () => schemas.next()],
])('deleting a participant on %s', (_name, storeEnv) => {
  it('leaves their number, name and words in no table; the call-back tickets stay, without them', async () => {
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z', ...storeEnv() });
    const enrolled = await server.request('POST', '/conversation/participants', {
      phone_number: PHONE,
      name: NAME,
      flow: 'service-desk',
    });
    expect(enrolled.status).toBe(201);
    const id = enrolled.body.result.id as string;
    await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'the greeting' });
    // On their channel, and in a desk session the operator started for their number.
    expect(await fromPhone(`I want to talk to a person about the ${WORD}`)).toMatch(/ticket number is tkt_/);
    const desk = await session('service-desk', { phone: PHONE });
    expect(await desk.say(`My name is ${NAME}, get me a person about the ${WORD}`)).toMatch(/ticket number is tkt_/);
    const opened = await tickets();
    expect(opened.map((ticket) => ticket.phone)).toEqual([PHONE, PHONE]);

    const before = await scanDatabase(server.store, NEEDLES);
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining(['participants', 'messages', 'inbox', 'outbox', 'crm_tickets', 'session_callers']),
    );
    expect(Object.values(before).flat()).toEqual(expect.arrayContaining(NEEDLES));

    expect((await server.request('DELETE', `/conversation/participants/${id}`)).status).toBe(200);
    expect(await scanDatabase(server.store, NEEDLES)).toEqual({});
    expect(await tickets()).toEqual(
      opened.map((ticket) => ({ ...ticket, reason: ERASED_TICKET_REASON, phone: null, conversation_id: null })),
    );
    // The session went with them: its stream was told and closed.
    expect(await desk.client.closed()).toBe(1008);
    expect((await server.request('GET', `/api/conversations/${desk.id}/turns`)).status).toBe(404);
  });
});

describe('deleting a participant while a turn of theirs runs', () => {
  it('waits for the turn of a session started for them: its reply is streamed, then the session ends', async () => {
    const held = new Promise<void>((resolve) => (releaseHeld = resolve));
    let holding = 0;
    const lastUser = (request: LlmRequest) =>
      [...request.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
    const provider = createScriptedProvider(async (request) => {
      if (!lastUser(request).includes('hold on')) return { text: 'ok' };
      holding += 1;
      await held;
      return { text: `Here is your answer about the ${WORD}` };
    });
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' }, { provider });
    const enrolled = await server.request('POST', '/conversation/participants', { phone_number: PHONE, name: NAME });
    const id = enrolled.body.result.id as string;
    const assistant = await session('assistant', { phone: PHONE });
    await server.engine.idle();

    expect((await assistant.send(`hold on, ${WORD}`)).status).toBe(202);
    await waitFor(() => holding === 1, { what: 'the model call of the turn' });
    const removal = server.request('DELETE', `/conversation/participants/${id}`);
    // The removal waits in the session's queue, behind its turn: the held turn, the participant's
    // conversation (taken first) and the session's queued removal.
    await waitFor(() => server!.engine.backlog === 3, { what: 'the removal queued behind the turn' });
    expect((await server.request('GET', `/conversation/participants/${id}`)).status).toBe(200);

    releaseHeld!();
    expect((await removal).status).toBe(200);
    expect(await assistant.client.closed()).toBe(1008);
    const ends = assistant.client.events.filter((event) => event.type === 'final' || event.type === 'error');
    expect(ends.slice(-2).map((event) => [event.type, event.text])).toEqual([
      ['final', `Here is your answer about the ${WORD}`],
      ['error', `conversation ${assistant.id} was deleted with its participant`],
    ]);
    expect(await scanDatabase(server.store, NEEDLES)).toEqual({});
  });
});
