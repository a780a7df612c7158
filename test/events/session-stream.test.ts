import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/events/session-event.ts';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let server: TestServer | undefined;
let clients: EventClient[] = [];
afterEach(async () => {
  for (const client of clients) client.close();
  clients = [];
  await server?.close();
  server = undefined;
});

const PHONE = '+14165550190';
const said = (request: LlmRequest) => request.messages.at(-1)?.content ?? '';

/** A model whose answer to each participant message is given by `reply`; greetings get "Hi!". */
function model(reply: (text: string) => ScriptedStep) {
  return createScriptedProvider((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: 'Saved, thank you.' };
    return said(request).startsWith('[') ? { text: 'Hi!' } : reply(said(request));
  });
}

async function start(reply: (text: string) => ScriptedStep, env: Record<string, string> = {}) {
  server = await startTestServer(env, { provider: model(reply) });
  const auth: Record<string, string> = env.API_TOKEN ? { authorization: `Bearer ${env.API_TOKEN}` } : {};
  const created = await server.request(
    'POST',
    '/conversation/participants',
    { phone_number: PHONE, name: 'Sam' },
    auth,
  );
  const id = created.body.result.id as string;
  await waitFor(() => server!.sink.to(PHONE).length >= 1, { what: 'greeting' });
  return id;
}

async function connect(id: string, query = '') {
  const client = await EventClient.connect(server!.url, id, query);
  clients.push(client);
  return client;
}

const message = (id: string, body: object) => server!.request('POST', `/api/conversations/${id}/message`, body);
const isFinalOf = (text: RegExp) => (event: SessionEvent) => event.type === 'final' && text.test(event.text);
const seqs = (events: SessionEvent[]) => events.map((event) => event.seq);
const consecutive = (from: number, count: number) => Array.from({ length: count }, (_, index) => from + index);

describe('session event stream over a real WebSocket', () => {
  it('streams a turn as speaking, tokens, tool status, final, speaking off — in order, with gapless seqs', async () => {
    const id = await start(() => ({
      toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }],
    }));
    const client = await connect(id, '?lastEventId=0');
    const accepted = await message(id, { type: 'text', text: 'I like walking' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ ok: true, callSessionId: expect.any(String), inboxId: expect.any(String) });
    await client.waitFor(isFinalOf(/Saved, thank you/), 'the final reply');
    await client.waitFor(
      (event) => event.type === 'speaking' && event.data.speaking === false && event.turnId === 2,
      'speaking off',
    );

    const logged = client.logged();
    expect(seqs(logged)).toEqual(consecutive(1, logged.length));
    const turn = logged.filter((event) => event.turnId === 2);
    const kinds = turn
      .map((event) => (event.type === 'speaking' ? `speaking:${event.data.speaking}` : event.type))
      .filter((kind, index, all) => kind !== 'token' || all[index - 1] !== 'token');
    // The tool runs before any text; its progress is additive status, then the reply streams.
    expect(kinds).toEqual(['status', 'status', 'speaking:true', 'token', 'final', 'speaking:false']);
    const tokens = turn.filter((event) => event.type === 'token');
    const final = turn.find((event) => event.type === 'final')!;
    expect(tokens.every((token) => token.messageId === final.messageId)).toBe(true);
    expect(tokens.map((token) => (token.type === 'token' ? token.text : '')).join('')).toContain('Saved, thank you.');
    const status = turn.filter((event) => event.type === 'status');
    expect(status.map((event) => event.correlationId)).toEqual(['call_2_1', 'call_2_1']);
    expect(status.map((event) => (event.type === 'status' ? event.text : ''))).toEqual(['Noting that down…', 'Done.']);
  });

  it('replays exactly the events after the cursor, also after a restart, then follows live', async () => {
    const database = tempSqliteUrl();
    const id = await start((text) => ({ text: `Echo ${text}` }), { DATABASE_URL: database });
    const first = await connect(id, '?lastEventId=0');
    await message(id, { text: 'one' });
    await first.waitFor(isFinalOf(/Echo one/), 'first reply');
    await message(id, { text: 'two' });
    await first.waitFor(isFinalOf(/Echo two/), 'second reply');
    await waitFor(() => first.logged().at(-1)?.type === 'speaking', { what: 'end of turn' });
    const all = first.logged();
    const cut = 5;

    const resumed = await connect(id, `?lastEventId=${cut}`);
    const resync = await resumed.waitFor((event) => event.type === 'resync', 'resync');
    expect(resumed.logged()).toEqual(all.slice(cut).map((event) => ({ ...event, receivedAt: expect.any(Number) })));
    expect(resync).toMatchObject({
      seq: all.at(-1)!.seq,
      data: { full: false, nextCursor: null, lastSeq: all.at(-1)!.seq },
    });

    await server!.close();
    server = await startTestServer(
      { DATABASE_URL: database },
      { provider: model((text) => ({ text: `Again ${text}` })) },
    );
    const afterRestart = await connect(id, `?lastEventId=${cut}`);
    await afterRestart.waitFor((event) => event.type === 'resync', 'resync after restart');
    expect(seqs(afterRestart.logged())).toEqual(seqs(all.slice(cut)));

    await message(id, { text: 'three' });
    const final = await afterRestart.waitFor(isFinalOf(/Again three/), 'reply after restart');
    expect(final.seq).toBeGreaterThan(all.at(-1)!.seq);
    expect(seqs(afterRestart.logged())).toEqual(consecutive(cut + 1, afterRestart.logged().length));
    expect(final.turnId).toBe(4); // greeting, one, two, three: turn numbers survive the restart
  });

  it('caps a replay at 200 events and answers a stale or unknown cursor with a full snapshot', async () => {
    const id = await start(() => ({ text: 'ok' }));
    for (let index = 0; index < 230; index++)
      await message(id, { type: 'partial_transcript', text: `partial ${index}` });
    const capped = await server!.request('POST', `/api/conversations/${id}/resync`, { lastEventId: 2 });
    const { events, resync } = capped.body.result as {
      events: SessionEvent[];
      resync: Extract<SessionEvent, { type: 'resync' }>;
    };
    expect(seqs(events)).toEqual(consecutive(3, 200));
    expect(resync.data).toMatchObject({ full: false, nextCursor: 202 });

    const ahead = await server!.request('POST', `/api/conversations/${id}/resync`, { lastEventId: 10_000 });
    expect(ahead.body.result.events).toEqual([]);
    expect(ahead.body.result.resync.data).toMatchObject({
      full: true,
      lastSeq: resync.seq,
      messages: [expect.objectContaining({ text: 'Hi!' })],
    });
    expect((await server!.request('POST', `/api/conversations/${id}/resync`, { lastEventId: -1 })).body.code).toBe(
      'invalid_request',
    );
  });

  it('delivers the first token before the model has finished streaming', async () => {
    const id = await start(() => ({ text: 'One moment while I think about that carefully.', streamDelayMs: 250 }));
    const client = await connect(id, '?lastEventId=0');
    const sentAt = performance.now();
    await message(id, { text: 'hello' });
    const final = await client.waitFor(isFinalOf(/carefully/), 'final');
    const firstToken = client.events.find((event) => event.type === 'token' && event.turnId === 2)!;
    const finalAt = client.events.find((event) => event.seq === final.seq)!.receivedAt;
    expect(firstToken.receivedAt - sentAt).toBeLessThan(finalAt - sentAt - 400); // two 250 ms pauses still to come
    const turns = (await server!.request('GET', `/conversation/participants/${id}/turns`)).body.result;
    expect(turns.at(-1).first_token_ms).toBeLessThan(turns.at(-1).total_ms - 400);
  });

  it('emits one status when no token came within 400 ms, and records time_to_status_ms', async () => {
    const id = await start(() => ({ text: 'Sorry for the wait.', delayMs: 700 }));
    const client = await connect(id, '?lastEventId=0');
    await message(id, { text: 'are you there?' });
    await client.waitFor(isFinalOf(/wait/), 'final');
    const turn = client.logged().filter((event) => event.turnId === 2);
    expect(turn.map((event) => event.type).slice(0, 3)).toEqual(['status', 'speaking', 'token']);
    expect(turn[0]).toMatchObject({ role: 'system', text: 'Thinking…' });
    const turns = (await server!.request('GET', `/conversation/participants/${id}/turns`)).body.result;
    expect(turns.at(-1).time_to_status_ms).toBeGreaterThanOrEqual(395);
    expect(turns.at(-1).first_token_ms).toBeGreaterThanOrEqual(695);
  });

  it('never streams JSON: a JSON answer is unwrapped or replaced, and no token shows it', async () => {
    const id = await start((text) => ({
      text: text === 'wrapped' ? '{"reply": "Plain words only."}' : '```json\n{"state": "FEEDBACK"}\n```',
    }));
    const client = await connect(id, '?lastEventId=0');
    await message(id, { text: 'wrapped' });
    await client.waitFor(isFinalOf(/^Plain words only\.$/), 'unwrapped reply');
    await message(id, { text: 'bare' });
    await client.waitFor((event) => event.type === 'final' && event.turnId === 3, 'fallback reply');
    const tokens = client.of('token').map((event) => (event.type === 'token' ? event.text : ''));
    expect(tokens.join('')).not.toMatch(/[{}`]/);
    const history = (await server!.request('GET', `/conversation/participants/${id}/history`)).body.result.messages;
    expect(history.map((m: { text: string }) => m.text).join('\n')).not.toMatch(/[{}`]/);
  });

  it('barge-in stops the tokens, turns speaking off, and no final follows for the interrupted message', async () => {
    const id = await start((text) =>
      text === 'long'
        ? { text: 'This is a very long answer that goes on and on and on.', streamDelayMs: 400 }
        : { text: 'Short.' },
    );
    const client = await connect(id, '?lastEventId=0');
    await message(id, { text: 'long' });
    const token = await client.waitFor((event) => event.type === 'token' && event.turnId === 2, 'first token');
    const barge = await message(id, { type: 'barge_in' });
    expect(barge.body).toMatchObject({ ok: true, interrupted: true });
    await client.waitFor((event) => event.type === 'status' && event.text === 'Interrupted', 'interrupted status');
    await message(id, { text: 'next' });
    await client.waitFor(isFinalOf(/^Short\.$/), 'the next turn');

    const interrupted = client.logged().filter((event) => event.messageId === token.messageId);
    expect(interrupted.filter((event) => event.type === 'final')).toEqual([]);
    expect(interrupted.filter((event) => event.type === 'token')).toHaveLength(1);
    expect(interrupted.some((event) => event.type === 'speaking' && event.data.speaking === false)).toBe(true);
    const history = (await server!.request('GET', `/conversation/participants/${id}/history`)).body.result.messages.map(
      (m: { role: string; text: string }) => `${m.role}:${m.text}`,
    );
    expect(history).toEqual(['assistant:Hi!', 'user:long', 'user:next', 'assistant:Short.']);
    const turns = (await server!.request('GET', `/conversation/participants/${id}/turns`)).body.result;
    expect(turns.map((turn: { status: string }) => turn.status)).toEqual(['completed', 'cancelled', 'completed']);
    expect((await message(id, { type: 'barge_in' })).body.interrupted).toBe(false);
  });

  it('answers bad frames and bad input with stable codes, and closes on oversized frames', async () => {
    const id = await start(() => ({ text: 'ok' }));
    const client = await connect(id);
    await client.waitFor((event) => event.type === 'resync', 'initial snapshot');
    client.send('not json');
    client.send({ type: 'resync', lastEventId: 'x' });
    client.send({ type: 'ping', since: 3 });
    client.send('[]');
    client.send('null');
    await waitFor(() => client.of('error').length === 5, { what: 'five error events' });
    expect(client.of('error').map((event) => (event.type === 'error' ? event.data : null))).toEqual([
      { code: 'invalid_frame', field: 'frame' },
      { code: 'invalid_frame', field: 'lastEventId' },
      { code: 'invalid_frame', field: 'since' },
      { code: 'invalid_frame', field: 'frame' },
      { code: 'invalid_frame', field: 'frame' },
    ]);
    client.send({ type: 'ping' });
    await client.waitFor((event) => event.type === 'pong', 'pong');
    // Larger than any request body may be (MAX_BODY_BYTES): the protocol's own close.
    client.send('x'.repeat(300_000));
    expect(await client.closed()).toBe(1009);

    expect((await message(id, { type: 'shout', text: 'x' })).body).toMatchObject({
      code: 'invalid_request',
      field: 'type',
    });
    expect((await message(id, { type: 'text' })).body).toMatchObject({ code: 'invalid_request', field: 'text' });
    expect((await message(id, { type: 'text', text: 'x'.repeat(32_001) })).body).toMatchObject({
      code: 'invalid_request',
      field: 'text',
    });
    expect((await message(id, { type: 'text', text: '\u200B\u200D\uFEFF' })).body).toMatchObject({
      code: 'invalid_request',
      field: 'text',
    });
    // The longest text in a three-byte script fits the default body limit.
    expect((await message(id, { type: 'text', text: '中'.repeat(32_000) })).status).toBe(202);
    expect((await server!.request('GET', '/api/conversations/nope/summary')).status).toBe(404);
  });

  it('answers the first frame over the budget, then disconnects a client that floods the socket', async () => {
    const id = await start(() => ({ text: 'ok' }));
    const client = await connect(id);
    await client.waitFor((event) => event.type === 'resync', 'initial snapshot');
    for (let i = 0; i < 300; i++) client.send({ type: 'resync', lastEventId: 0 });
    expect(await client.closed()).toBe(1008);
    expect(client.of('error').map((event) => (event.type === 'error' ? event.data : null))).toEqual([
      { code: 'rate_limited', field: 'frame' },
    ]);
    expect((await server!.request('GET', '/health')).status).toBe(200);
  });

  it('requires the token, or a single-use ticket for a browser WebSocket', async () => {
    const token = 'stream-test-token-0123456789';
    const id = await start(() => ({ text: 'ok' }), { API_TOKEN: token });
    const ws = `${server!.url.replace(/^http/, 'ws')}/api/conversations/${id}/socket`;
    await expect(new EventClient(ws).opened).rejects.toThrow();
    const ticket = (await server!.request('POST', '/api/tickets', undefined, { authorization: `Bearer ${token}` })).body
      .result.ticket;
    const client = new EventClient(`${ws}?ticket=${ticket}`);
    clients.push(client);
    await client.opened;
    await client.waitFor((event) => event.type === 'resync', 'snapshot');
    await expect(new EventClient(`${ws}?ticket=${ticket}`).opened).rejects.toThrow();

    // A browser's EventSource cannot send the header either.
    const sse = `${server!.url}/api/conversations/${id}/stream`;
    expect((await fetch(sse)).status).toBe(401);
    const sseTicket = (await server!.request('POST', '/api/tickets', undefined, { authorization: `Bearer ${token}` }))
      .body.result.ticket;
    const abort = new AbortController();
    const opened = await fetch(`${sse}?ticket=${sseTicket}`, { signal: abort.signal });
    expect([opened.status, opened.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    abort.abort();
    expect((await fetch(`${sse}?ticket=${sseTicket}`)).status).toBe(401);
    // A ticket opens only streams: not the API.
    const apiTicket = (await server!.request('POST', '/api/tickets', undefined, { authorization: `Bearer ${token}` }))
      .body.result.ticket;
    expect((await server!.fetch(`/api/conversations/${id}/summary?ticket=${apiTicket}`)).status).toBe(401);

    // A ticket asked for one conversation opens that one only.
    const scoped = async () =>
      (await server!.request('POST', '/api/tickets', { conversation_id: id }, { authorization: `Bearer ${token}` }))
        .body.result.ticket;
    const other = `${server!.url.replace(/^http/, 'ws')}/api/conversations/conv_other/socket`;
    await expect(new EventClient(`${other}?ticket=${await scoped()}`).opened).rejects.toThrow();
    const own = new EventClient(`${ws}?ticket=${await scoped()}`);
    clients.push(own);
    await own.opened;
    const refused = await server!.request(
      'POST',
      '/api/tickets',
      { conversation: id },
      { authorization: `Bearer ${token}` },
    );
    expect(refused.body).toMatchObject({ code: 'invalid_request', field: 'conversation' });
  });

  it('tells a socket its participant was deleted, then closes it (it waited for ever)', async () => {
    const id = await start(() => ({ text: 'ok' }));
    const client = await connect(id, '?lastEventId=0');
    await client.waitFor((event) => event.type === 'resync', 'the snapshot');
    expect((await server!.request('DELETE', `/conversation/participants/${id}`)).status).toBe(200);
    expect(await client.closed()).toBe(1008);
    expect(client.of('error').map((event) => (event.type === 'error' ? event.data : null))).toEqual([
      { code: 'not_found', field: 'id' },
    ]);
  });

  it("stamps a client's own events (pong, error) on the conversation's clock, as its logged ones", async () => {
    const id = await start(() => ({ text: 'ok' }), { CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' });
    const client = await connect(id, '?lastEventId=0');
    await client.waitFor((event) => event.type === 'resync', 'the snapshot');
    client.send({ type: 'ping' });
    client.send('not json');
    await waitFor(() => client.of('pong').length === 1 && client.of('error').length === 1, { what: 'pong and error' });
    // The virtual clock stands still until it is moved: wall time would be today.
    expect([client.of('pong')[0]!.at, client.of('error')[0]!.at]).toEqual([
      '2026-06-01T12:00:00.000Z',
      '2026-06-01T12:00:00.000Z',
    ]);
  });

  it('reads an empty ?lastEventId= as no cursor: a snapshot, not a replay of everything', async () => {
    const id = await start(() => ({ text: 'ok' }));
    const client = await connect(id, '?lastEventId=');
    const first = await client.waitFor(() => true, 'first event');
    expect(first.type).toBe('resync');
  });
});

describe('the other transports', () => {
  it('SSE: id lines are seqs and Last-Event-ID resumes after them', async () => {
    const id = await start((text) => ({ text: `Echo ${text}` }));
    await message(id, { text: 'one' });
    await waitFor(() => server!.sink.to(PHONE).length >= 2, { what: 'reply' });
    const abort = new AbortController();
    const response = await fetch(`${server!.url}/api/conversations/${id}/stream`, {
      headers: { 'last-event-id': '2' },
      signal: abort.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: resync')) text += (await reader.read()).value ?? '';
    abort.abort();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids[0]).toBe(3);
    expect(ids.slice(0, -1)).toEqual(consecutive(3, ids.length - 1));
  });

  it("SSE: a deleted participant's stream ends with a not_found error", async () => {
    const id = await start(() => ({ text: 'ok' }));
    const response = await fetch(`${server!.url}/api/conversations/${id}/stream`);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('event: resync')) text += (await reader.read()).value ?? '';
    expect((await server!.request('DELETE', `/conversation/participants/${id}`)).status).toBe(200);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(
      /^id: 0\nevent: error\ndata: .*"code":"not_found","field":"id"/,
    );
  });

  it('timer-sent messages reach the stream as finals outside any turn', async () => {
    const id = await start(() => ({ text: 'ok' }), { CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' });
    const client = await connect(id, '?lastEventId=0');
    await message(id, { text: 'delay' });
    await client.waitFor(isFinalOf(/^ok$/), 'reply');
    await server!.request('POST', `/conversation/participants/${id}/state`, { sub_state: 'FEEDBACK', reason: 'test' });
    const note = await client.waitFor((event) => event.type === 'final' && event.role === 'system', 'operator note');
    expect(note.turnId).toBeNull();
  });

  it('summarises a conversation in markdown: turns, tool calls with arguments, latency', async () => {
    const id = await start(() => ({ toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'yoga' } }] }));
    await message(id, { text: 'yoga please' });
    await waitFor(() => server!.sink.to(PHONE).length >= 2, { what: 'reply' });
    const response = await server!.fetch(`/api/conversations/${id}/summary`);
    expect(response.headers.get('content-type')).toContain('text/markdown');
    const markdown = await response.text();
    expect(markdown).toMatch(/^# Conversation conv_/);
    expect(markdown).toContain('Model calls: 2 (scripted / scripted)');
    expect(markdown).toMatch(/Tool `save_user_profile` \(round 1, ok, \d+ ms\): arguments `\{"habit_domain":"yoga"\}`/);
    expect(markdown).toMatch(/Latency: first token \d+ ms/);
  });
});
