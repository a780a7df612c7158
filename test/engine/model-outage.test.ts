import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_FAILURE_REPLY, MODEL_OUTAGE_NOTICE } from '../../src/engine/turn-runner.ts';
import {
  lastUserText,
  startFakeOpenAiServer,
  type FakeAnswer,
  type FakeOpenAiServer,
} from '../kit/fake-openai-server.ts';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

const PHONE = '+14165550171';
const LATE = '+14165550172';
const REFUSED = '+14165550173';

/** The model as the test runs it: up, down (503 or refused connections), or refusing one sender's key. */
const model = { down: false, rejectFor: '' };
let fake: FakeOpenAiServer;
let server: TestServer;

function answer(body: Record<string, unknown>): FakeAnswer {
  if (model.down) return { fault: 'status', status: 503 };
  const said = lastUserText(body);
  if (model.rejectFor && JSON.stringify(body).includes(model.rejectFor))
    return {
      fault: 'status',
      status: 401,
      body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
    };
  return { text: said.startsWith('[') ? 'welcome' : `echo: ${said}` };
}

beforeAll(async () => {
  fake = await startFakeOpenAiServer((body) => answer(body));
  server = await startTestServer({ LLM_BASE_URL: fake.baseUrl, LLM_MAX_RETRIES: '0' });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const texts = (phone: string) => server.sink.to(phone).map((message) => message.text);
const say = (phone: string, text: string) => server.request('POST', '/conversation/inbound', { from: phone, text });

describe('a model outage', () => {
  it('keeps messages waiting, tells the person once, answers everything in order once the model is back', async () => {
    const enrolled = await server.request('POST', '/conversation/participants', { phone_number: PHONE, name: 'Ada' });
    expect(enrolled.status).toBe(201);
    await waitFor(() => texts(PHONE).length === 1, { what: 'the greeting' });
    const stream = await EventClient.connect(server.url, enrolled.body.result.id);

    model.down = true;
    expect((await say(PHONE, 'first')).status).toBe(202);
    expect((await say(PHONE, 'second')).status).toBe(202);
    // A participant enrolled during the outage: their greeting waits too (no notice: they asked nothing).
    expect(
      (await server.request('POST', '/conversation/participants', { phone_number: LATE, name: 'Bo' })).status,
    ).toBe(201);
    await waitFor(() => texts(PHONE).includes(MODEL_OUTAGE_NOTICE), { what: 'the outage notice' });
    await waitFor(() => fake.requests.length >= 6, { what: 'a few retries during the outage' });
    const health = await server.request('GET', '/health');
    expect(health).toMatchObject({
      status: 200,
      body: { status: 'degraded', model_status: { state: 'failing', lastErrorTransient: true } },
    });
    expect(texts(LATE)).toEqual([]);
    // A client following the conversation sees each failed attempt end with an error event.
    await waitFor(() => stream.of('error').length > 0, { what: 'an error event' });
    expect(stream.of('error')[0]).toMatchObject({ data: { code: 'llm_unavailable' } });

    model.down = false;
    await waitFor(() => texts(PHONE).length === 4 && texts(LATE).length === 1, {
      what: 'every answer after the outage',
      timeoutMs: 40_000,
    });
    await server.settle();
    expect(texts(PHONE)).toEqual(['welcome', MODEL_OUTAGE_NOTICE, 'echo: first', 'echo: second']);
    expect(texts(LATE)).toEqual(['welcome']);
    // The operator sees which turns waited: they ran more than once, and each says how often.
    const turns = (await server.request('GET', `/conversation/participants/${enrolled.body.result.id}/turns`)).body
      .result as Array<{ trigger: string; status: string; attempts: number }>;
    expect(turns.map(({ trigger, status }) => [trigger, status])).toEqual([
      ['greeting', 'completed'],
      ['message', 'completed'],
      ['message', 'completed'],
    ]);
    expect(turns[0]!.attempts).toBe(1);
    expect(turns[1]!.attempts).toBeGreaterThan(1);
    stream.close();
    expect((await server.request('GET', '/health')).body).toMatchObject({
      status: 'ok',
      model_status: { state: 'ok', consecutiveFailures: 0 },
    });
  }, 60_000);

  it(
    'is not what a refused request is: a 401 is answered once with an apology that promises nothing, and ' +
      'shows in the turn record',
    async () => {
      model.rejectFor = 'Cy';
      expect(
        (await server.request('POST', '/conversation/participants', { phone_number: REFUSED, name: 'Cy' })).status,
      ).toBe(201);
      await server.settle();
      const before = fake.requests.length;
      expect((await say(REFUSED, 'hello?')).status).toBe(202);
      await waitFor(() => texts(REFUSED).includes(MODEL_FAILURE_REPLY), { what: 'the apology' });
      await server.settle();
      expect(fake.requests.length - before).toBe(1);
      const participant = (await server.store.findParticipantByPhone(REFUSED))!;
      const conversation = (await server.store.findConversationByParticipant(participant.id))!;
      const turns = await server.store.listTurns(conversation.id);
      expect(turns.find((turn) => turn.trigger === 'message')).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('401'),
        attempts: 1,
      });
      expect(MODEL_FAILURE_REPLY).not.toMatch(/pick up|as soon as|later|will answer/i);
    },
  );
});
