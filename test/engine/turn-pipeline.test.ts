import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { ChannelSink } from '../kit/channel-sink.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { seededRandom } from '../kit/seeded-random.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const lastUserText = (request: LlmRequest) => request.messages.at(-1)?.content ?? '';

/** A model that answers "echo: <message>" after a random pause, and tracks overlapping calls. */
function echoModel(maxDelayMs: number) {
  const active = new Map<string, number>();
  const stats = { overlapsWithinConversation: 0, peakConcurrency: 0, running: 0 };
  const random = seededRandom();
  const provider = createScriptedProvider(async (request) => {
    const said = lastUserText(request);
    const context = request.messages
      .filter((message) => message.role === 'system')
      .map((message) => message.content)
      .join('\n');
    const who = /^Name: (.+)$/m.exec(context)?.[1];
    if (!who) throw new Error('the model request names no participant');
    if ((active.get(who) ?? 0) > 0) stats.overlapsWithinConversation += 1;
    active.set(who, (active.get(who) ?? 0) + 1);
    stats.running += 1;
    stats.peakConcurrency = Math.max(stats.peakConcurrency, stats.running);
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * maxDelayMs)));
    stats.running -= 1;
    active.set(who, (active.get(who) ?? 1) - 1);
    return { text: said.startsWith('[') ? 'welcome' : `echo: ${said}` };
  });
  return { provider, stats };
}

async function enrolAndGreet(phone: string, name = phone) {
  const created = await server!.request('POST', '/conversation/participants', { phone_number: phone, name });
  expect(created.status).toBe(201);
  await waitFor(() => server!.sink.to(phone).length >= 1, { what: `greeting for ${phone}` });
  return created.body.result.id as string;
}

describe('turn pipeline', () => {
  it('runs a 50-message burst to one participant as 50 ordered, non-overlapping turns', async () => {
    const { provider, stats } = echoModel(15);
    server = await startTestServer({}, { provider });
    const id = await enrolAndGreet('+14165550101', 'Burst');

    const sent = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        server!.request('POST', '/conversation/inbound', { from: '+14165550101', text: `m${index}` }),
      ),
    );
    expect(sent.every((response) => response.status === 202)).toBe(true);
    await waitFor(() => server!.sink.to('+14165550101').length === 51, { what: '50 replies', timeoutMs: 20_000 });

    const history = await server.request('GET', `/conversation/participants/${id}/history?all=true`);
    const messages = history.body.result.messages as Array<{ role: string; text: string; seq: number }>;
    expect(messages).toHaveLength(101);
    expect(messages.map((message) => message.seq)).toEqual(Array.from({ length: 101 }, (_, index) => index + 1));
    // The order of the 202s is the order the turns ran: each reply follows its own message.
    const arrival = await Promise.all(sent.map((response) => server!.store.getInbox(response.body.result.inbox_id)));
    const expected = arrival
      .sort((a, b) => a!.receivedAt.getTime() - b!.receivedAt.getTime())
      .flatMap((item) => [`user:${item!.text}`, `assistant:echo: ${item!.text}`]);
    expect(messages.slice(1).map((message) => `${message.role}:${message.text}`)).toEqual(expected);
    expect(stats.overlapsWithinConversation).toBe(0);
    const turns = await server.store.listTurns(history.body.result.conversation_id);
    expect(turns.filter((turn) => turn.trigger === 'message')).toHaveLength(50);
    expect((await server.request('GET', `/conversation/participants/${id}/history`)).body.result.messages).toHaveLength(
      50,
    );
  });

  it('runs 20 participants concurrently', async () => {
    const { provider, stats } = echoModel(40);
    server = await startTestServer({}, { provider });
    const phones = Array.from({ length: 20 }, (_, index) => `+1416555${String(2000 + index)}`);
    for (const phone of phones) await enrolAndGreet(phone);
    stats.peakConcurrency = 0;
    await Promise.all(
      phones.map((phone) => server!.request('POST', '/conversation/inbound', { from: phone, text: 'hello' })),
    );
    await waitFor(() => phones.every((phone) => server!.sink.to(phone).length === 2), { what: '20 replies' });
    expect(stats.peakConcurrency).toBeGreaterThan(1);
    expect(stats.overlapsWithinConversation).toBe(0);
  });

  it('deduplicates by message_id, acknowledges unknown senders, records messages of paused participants', async () => {
    server = await startTestServer(
      {},
      { provider: createScriptedProvider((request) => ({ text: `echo: ${lastUserText(request)}` })) },
    );
    const id = await enrolAndGreet('+14165550102');
    const first = await server.request('POST', '/conversation/inbound', {
      from: '+14165550102',
      text: 'once',
      message_id: 'wamid.1',
    });
    const again = await server.request('POST', '/conversation/inbound', {
      from: '+14165550102',
      text: 'once',
      message_id: 'wamid.1',
    });
    expect(first.body.result).toMatchObject({ duplicate: false, status: 'queued' });
    expect(again.body.result).toMatchObject({ duplicate: true, inbox_id: first.body.result.inbox_id });
    await waitFor(() => server!.sink.to('+14165550102').length === 2);
    // Another text under a used id would go unanswered: refused, naming the field.
    const reused = await server.request('POST', '/conversation/inbound', {
      from: '+14165550102',
      text: 'something else',
      message_id: 'wamid.1',
    });
    expect(reused).toMatchObject({
      status: 409,
      body: { status: 'error', code: 'message_id_reused', field: 'message_id' },
    });
    const session = await server.request('POST', `/api/conversations/${id}/message`, {
      text: 'typed',
      message_id: 'w1',
    });
    expect(session.status).toBe(202);
    expect(
      (await server.request('POST', `/api/conversations/${id}/message`, { text: 'typed', message_id: 'w1' })).body,
    ).toMatchObject({ duplicate: true });
    expect(
      (await server.request('POST', `/api/conversations/${id}/message`, { text: 'typed again', message_id: 'w1' }))
        .body,
    ).toMatchObject({ code: 'message_id_reused' });
    await waitFor(() => server!.sink.to('+14165550102').length === 3, { what: 'the typed message answered' });

    const stranger = await server.request('POST', '/conversation/inbound', {
      from: '+14165550999',
      text: 'who is this?',
    });
    expect(stranger).toMatchObject({ status: 202, body: { result: { status: 'unknown_sender' } } });
    await waitFor(() => server!.sink.to('+14165550999').length === 1, { what: 'acknowledgement' });
    expect((await server.store.getInbox(stranger.body.result.inbox_id))?.text).toBe('who is this?');

    await server.request('PUT', `/conversation/participants/${id}`, { status: 'paused' });
    await server.request('POST', '/conversation/inbound', { from: '+14165550102', text: 'are you there?' });
    const history = await waitFor(async () => {
      const response = await server!.request('GET', `/conversation/participants/${id}/history`);
      const texts = response.body.result.messages.map((message: { text: string }) => message.text);
      return texts.includes('are you there?') && texts;
    });
    expect(history.at(-1)).toBe('are you there?');
    await server.engine.idle();
    expect(server.sink.to('+14165550102')).toHaveLength(3);
  });

  it('auto-enrols new senders when AUTO_ENROLL_NEW_USERS=true', async () => {
    server = await startTestServer(
      { AUTO_ENROLL_NEW_USERS: 'true' },
      { provider: createScriptedProvider(() => ({ text: 'nice to meet you' })) },
    );
    const response = await server.request('POST', '/conversation/inbound', { from: '+14165550103', text: 'hi' });
    expect(response.body.result.status).toBe('queued');
    await waitFor(() => server!.sink.to('+14165550103').length === 1);
    expect(server.sink.to('+14165550103')[0]?.text).toBe('nice to meet you');
  });

  // A model that cannot be reached is waited for instead (test/engine/model-outage.test.ts).
  it('apologises when the model refuses the request, keeping the message in the history', async () => {
    const provider = createScriptedProvider((request) => {
      if (lastUserText(request).startsWith('[')) return { text: 'hello' };
      return { error: new AppError('llm_rejected', 'provider refused the key', { fault: 'model', retryable: false }) };
    });
    server = await startTestServer({}, { provider });
    const id = await enrolAndGreet('+14165550104');
    await server.request('POST', '/conversation/inbound', { from: '+14165550104', text: 'still there?' });
    await waitFor(() => server!.sink.to('+14165550104').length === 2);
    expect(server.sink.to('+14165550104')[1]?.text).toMatch(/sorry/i);
    const history = await server.request('GET', `/conversation/participants/${id}/history`);
    expect(history.body.result.messages.map((message: { text: string }) => message.text)).toContain('still there?');
    const turns = await server.store.listTurns(history.body.result.conversation_id);
    expect(turns.at(-1)).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('provider refused the key'),
    });
  });

  it('retries failed deliveries through the outbox with the same idempotency key', async () => {
    const sink = new ChannelSink({ failFirst: 1 });
    server = await startTestServer({}, { provider: createScriptedProvider(() => ({ text: 'hello' })), channel: sink });
    await server.request('POST', '/conversation/participants', { phone_number: '+14165550105' });
    await waitFor(() => sink.delivered.length === 1, { timeoutMs: 8000, what: 'retried delivery' });
    expect(sink.attempts).toHaveLength(2);
    expect(sink.attempts[0]?.idempotencyKey).toBe(sink.attempts[1]?.idempotencyKey);
  });
});

describe('auth', () => {
  it('requires the bearer token on every non-public route when API_TOKEN is set', async () => {
    server = await startTestServer(
      { API_TOKEN: 'a-very-long-test-token' },
      { provider: createScriptedProvider(() => ({ text: 'x' })) },
    );
    expect((await server.request('GET', '/health')).status).toBe(200);
    expect((await server.request('GET', '/openapi.json')).status).toBe(200);
    const denied = await server.request('GET', '/conversation/participants');
    expect(denied).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(
      (await server.request('GET', '/conversation/participants', undefined, { authorization: 'Bearer wrong' })).status,
    ).toBe(401);
    expect((await server.request('POST', '/conversation/inbound', { from: '+14165550106', text: 'x' })).status).toBe(
      401,
    );
    const allowed = await server.request('GET', '/conversation/participants', undefined, {
      authorization: 'Bearer a-very-long-test-token',
    });
    expect(allowed.status).toBe(200);
  });
});
