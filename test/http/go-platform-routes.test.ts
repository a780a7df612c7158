import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

// The Go server's own API test scripts (test-scripts/test-*.sh at c1e920f) and its handlers
// (../shared/spec/go-original/) are where these requests and answers come from. TEST_PHONE is an
// enrolled participant here: every message belongs to a conversation.
const API_TOKEN = 'go-platform-test-token-0123';
const TEST_PHONE = '14165550123'; // Go's digits-only form
const E164 = '+14165550123';
const TEST_PHONE_2 = '16135550142';
const START = '2026-03-20T12:00:00.000Z'; // 08:00 in Toronto
let server: TestServer;

/** In-process: the sockets are not the point here. */
async function call(method: string, url: string, body?: unknown, token: string | null = API_TOKEN) {
  const response = await server.app.inject({
    method: method as 'GET',
    url,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: response.statusCode, body: response.body ? response.json() : undefined, headers: response.headers };
}

const texts = (phone = E164) => server.sink.to(phone).map((message) => message.text);

beforeAll(async () => {
  const provider = createScriptedProvider((request) => ({
    text: request.messages[0]?.content.startsWith('You are a concise')
      ? `generated: ${request.messages.at(-1)?.content}`
      : 'Hello from the coach',
  }));
  server = await startTestServer({ API_TOKEN, CLOCK: 'virtual', CLOCK_START: START }, { provider });
  for (const [phone, timezone] of [
    [TEST_PHONE, 'America/Toronto'],
    [TEST_PHONE_2, ''],
  ])
    expect((await call('POST', '/conversation/participants', { phone_number: phone, timezone })).status).toBe(201);
  await server.settle(); // the greetings
});
afterAll(() => server?.close());

describe('POST /send (test-send.sh)', () => {
  it("sends a static prompt with the 'Did you do it?' poll through the outbox, answering Go's envelope", async () => {
    const before = texts().length;
    const sent = await call('POST', '/send', { to: TEST_PHONE, type: 'static', body: 'Hello from PromptPipe test!' });
    expect(sent).toMatchObject({ status: 200, body: { status: 'ok', message: 'Message sent successfully' } });
    expect(sent.body).toEqual({ status: 'ok', message: 'Message sent successfully' });
    await server.settle();
    expect(
      server.sink
        .to(E164)
        .slice(before)
        .map((m) => [m.kind, m.text, m.poll?.options]),
    ).toEqual([
      ['text', 'Hello from PromptPipe test!', undefined],
      ['poll', 'Did you do it?', ['Done', 'Not yet']],
    ]);
    const history = await call('GET', `/conversation/participants/${await idOf(TEST_PHONE)}/history`);
    expect(history.body.result.messages.at(-2)).toMatchObject({ role: 'assistant', source: 'operator' });
  });

  it('sends prompts: branch as numbered text, genai as the model wrote it, conversation as Go did', async () => {
    const before = texts().length;
    const branch = {
      to: TEST_PHONE,
      type: 'branch',
      body: 'Choose an option:',
      branch_options: [
        { label: 'Option A', body: 'You chose A' },
        { label: 'Option B', body: 'You chose B' },
      ],
    };
    expect((await call('POST', '/send', branch)).status).toBe(200);
    const genai = {
      to: TEST_PHONE,
      type: 'genai',
      body: 'Generate a brief motivational message',
      system_prompt: 'You are a concise motivational speaker. Keep responses under 50 words.',
      user_prompt: 'Create a short motivational message.',
    };
    expect((await call('POST', '/send', genai)).status).toBe(200);
    expect((await call('POST', '/send', { to: TEST_PHONE, type: 'conversation', user_prompt: 'hi' })).status).toBe(200);
    await server.settle();
    expect(texts().slice(before)).toEqual([
      "Choose an option:\n\n1. Option A: You chose A\n2. Option B: You chose B\n\n(Reply with '1' or '2')",
      'generated: Create a short motivational message.',
      'Did you do it?',
      "I'm ready to chat! Send me a message to start our conversation.",
    ]);
  });

  it('refuses bad input with a 4xx naming the field and a stable code, and sends nothing', async () => {
    const before = server.sink.delivered.length;
    const refused = async (body: unknown, status: number, code: string, field?: string) => {
      const response = await call('POST', '/send', body);
      expect(response.body, JSON.stringify(body)).toMatchObject({ status: 'error', code, ...(field ? { field } : {}) });
      expect(response.status).toBe(status);
    };
    await refused({ to: 'invalid-phone', type: 'static', body: 'This should fail' }, 400, 'invalid_phone_number', 'to');
    await refused({ type: 'static', body: 'Missing phone number' }, 400, 'invalid_request', 'to');
    await refused({ to: TEST_PHONE, type: 'static', body: '' }, 400, 'invalid_request', 'body');
    await refused({ to: TEST_PHONE, type: 'invalid_type', body: 'Test message' }, 400, 'invalid_request', 'type');
    await refused(
      { to: TEST_PHONE, type: 'genai', body: 'x', user_prompt: 'Test' },
      400,
      'invalid_request',
      'system_prompt',
    );
    await refused({ to: TEST_PHONE, type: 'genai', system_prompt: 'S' }, 400, 'invalid_request', 'user_prompt');
    await refused({ to: TEST_PHONE, type: 'custom', body: 'x', state: 'initial' }, 400, 'invalid_request', 'type');
    await refused({ to: TEST_PHONE, body: 'x', priority: 'high' }, 400, 'invalid_request', 'priority');
    await refused('{"invalid": json}', 400, 'invalid_json', 'body');
    await refused({ to: '+14165550199', body: 'nobody enrolled' }, 404, 'participant_not_found', 'to');
    expect(await call('GET', '/send')).toMatchObject({ status: 405, headers: { allow: 'POST' } });
    await server.settle();
    expect(server.sink.delivered.length).toBe(before);
  });

  it('refuses to message a paused participant (409) and anyone without the API token (401)', async () => {
    const id = await idOf(TEST_PHONE_2);
    const paused = await call('PUT', `/conversation/participants/${id}`, { status: 'paused' });
    expect(paused.body.message).toBe('Participant updated successfully'); // Go's words
    expect(await call('POST', '/send', { to: TEST_PHONE_2, body: 'hi' })).toMatchObject({
      status: 409,
      body: { code: 'participant_inactive', field: 'to' },
    });
    await call('PUT', `/conversation/participants/${id}`, { status: 'active' });
    expect((await call('POST', '/send', { to: TEST_PHONE, body: 'hi' }, null)).status).toBe(401);
    expect((await call('GET', '/receipts', undefined, 'wrong-token-0123456789')).status).toBe(401);
  });
});

describe('POST /schedule and the timers (test-schedule.sh)', () => {
  it('recurring send (durable, participant’s zone): in GET /timers, fired by the clock, DELETE cancels', async () => {
    const created = await call('POST', '/schedule', {
      to: TEST_PHONE,
      type: 'static',
      body: 'Scheduled message test',
      schedule: { hour: 9, minute: 0 },
    });
    expect(created).toMatchObject({ status: 201, body: { status: 'ok', message: 'Scheduled successfully' } });
    const id = created.body.result as string;
    expect(id).toMatch(/^sched_[0-9a-f]+$/);
    // 09:00 Toronto is an hour away: today, not tomorrow as Go's timer had it.
    expect((await call('GET', `/timers/${id}`)).body).toEqual({
      id,
      type: 'recurring',
      scheduled_at: START,
      schedule: { hour: 9, minute: 0, timezone: 'America/Toronto' },
      next_run: '2026-03-20T13:00:00.000Z',
      remaining: '1h0m0s',
      description: 'Recurring timer with schedule schedule([minute=0 hour=9])',
    });
    const listed = (await call('GET', '/timers')).body;
    expect(listed.count).toBe(listed.timers.length);
    expect(listed.timers.map((timer: { id: string }) => timer.id)).toContain(id);

    const before = texts().length;
    await call('POST', '/admin/clock', { advance: '1h' });
    await server.settle();
    expect(texts().slice(before)).toEqual(['Scheduled message test', 'Did you do it?']);
    expect((await call('GET', `/timers/${id}`)).body.next_run).toBe('2026-03-21T13:00:00.000Z');

    expect(await call('DELETE', `/timers/${id}`)).toEqual({
      status: 200,
      body: { message: 'Timer cancelled successfully', timerID: id, canceled: true },
      headers: expect.anything(),
    });
    expect(await call('GET', `/timers/${id}`)).toMatchObject({
      status: 404,
      body: { status: 'error', code: 'not_found', message: `Timer not found: timer with ID ${id} not found` },
    });
    await call('POST', '/admin/clock', { advance: '1d' });
    await server.settle();
    expect(texts().slice(before)).toHaveLength(2); // cancelled: nothing more
  });

  it('reads a schedule in its own zone, else UTC for a participant without one', async () => {
    // The clock is at Saturday 21 March, 13:00 UTC now: this Saturday's 10:00 in London has passed.
    const london = await call('POST', '/schedule', {
      to: TEST_PHONE_2,
      body: 'Weekly',
      schedule: { hour: 10, minute: 0, weekday: 6, timezone: 'europe/london' },
    });
    const utc = await call('POST', '/schedule', { to: TEST_PHONE_2, body: 'New Year', schedule: { month: 1, day: 1 } });
    const [a, b] = await Promise.all([london, utc].map((r) => call('GET', `/timers/${r.body.result}`)));
    expect([a!.body.next_run, a!.body.schedule.timezone]).toEqual(['2026-03-28T10:00:00.000Z', 'Europe/London']);
    expect([b!.body.next_run, b!.body.schedule.timezone]).toEqual(['2027-01-01T00:00:00.000Z', 'UTC']);
  });

  it('skips a paused participant and keeps the series for when they are back (Go kept sending)', async () => {
    const id = await idOf(TEST_PHONE_2);
    const created = await call('POST', '/schedule', { to: TEST_PHONE_2, body: 'Daily nudge', schedule: { hour: 14 } });
    await call('PUT', `/conversation/participants/${id}`, { status: 'paused' });
    await call('POST', '/admin/clock', { advance: '1h' }); // 14:00 UTC: due
    await server.settle();
    expect(texts('+16135550142')).not.toContain('Daily nudge');
    expect((await call('GET', `/timers/${created.body.result}`)).body.next_run).toBe('2026-03-22T14:00:00.000Z');
    await call('PUT', `/conversation/participants/${id}`, { status: 'active' });
    await call('POST', '/admin/clock', { advance: '1d' });
    await server.settle();
    expect(texts('+16135550142').filter((text) => text === 'Daily nudge')).toHaveLength(1);
    await call('DELETE', `/timers/${created.body.result}`);
  });

  it('refuses what cannot be scheduled, naming the field; a flow’s own timers are not cancelled here', async () => {
    const refused = async (body: object, field: string) => {
      const response = await call('POST', '/schedule', { to: TEST_PHONE, body: 'x', ...body });
      expect(response, field).toMatchObject({ status: 400, body: { status: 'error', field } });
    };
    await refused({}, 'schedule');
    await refused({ schedule: { minute: 99 } }, 'schedule.minute');
    await refused({ schedule: { weekday: 7 } }, 'schedule.weekday');
    await refused({ schedule: { timezone: 'Mars/Olympus' } }, 'schedule.timezone');
    await refused({ schedule: { month: 2, day: 30 } }, 'schedule');
    expect((await call('GET', '/schedule')).status).toBe(405);
    expect((await call('DELETE', '/timers/tmr_nope')).status).toBe(404);

    const reminder = 'tmr_go_platform_reminder';
    const participantId = await idOf(TEST_PHONE);
    const conversation = await server.store.findConversationByParticipant(participantId);
    await server.store.scheduleTimer({
      id: reminder,
      kind: 'reminder',
      conversationId: conversation!.id,
      participantId,
      dedupKey: `reminder:${participantId}`,
      dueAt: new Date('2026-03-25T00:00:00Z'),
      payload: { promptSentAt: START },
      createdAt: new Date(START),
    });
    expect((await call('GET', `/timers/${reminder}`)).body).toMatchObject({ id: reminder, type: 'once' });
    expect(await call('DELETE', `/timers/${reminder}`)).toMatchObject({ status: 409, body: { code: 'conflict' } });
  });
});

describe('POST /response, GET /responses, GET /stats, GET /receipts (test-responses.sh, test-receipts.sh)', () => {
  it("records a reply in the participant's transcript without answering it, and counts it", async () => {
    const before = server.sink.delivered.length;
    const recorded = await call('POST', '/response', { from: TEST_PHONE_2, body: 'Response with emoji 😊', time: 1 });
    expect(recorded).toMatchObject({ status: 201, body: { status: 'ok', message: 'Response recorded successfully' } });
    const responses = (await call('GET', '/responses')).body;
    expect(responses.status).toBe('ok');
    const mine = responses.result.filter((r: { from: string }) => r.from === '+16135550142');
    expect(mine).toEqual([{ from: '+16135550142', body: 'Response with emoji 😊', time: expect.any(Number) }]);
    expect(mine[0].time).toBeGreaterThan(1); // the server's clock, as Go set it
    const stats = (await call('GET', '/stats')).body.result;
    expect(stats.total_responses).toBe(responses.result.length);
    expect(stats.responses_per_sender['+16135550142']).toBe(1);
    const bytes = responses.result.reduce((sum: number, r: { body: string }) => sum + Buffer.byteLength(r.body), 0);
    expect(stats.avg_response_length).toBeCloseTo(bytes / responses.result.length);
    await server.settle();
    expect(server.sink.delivered.length).toBe(before); // recorded, not answered
  });

  it('refuses a reply without a sender, with a bad number, no text or a time that is not a number', async () => {
    const refused = async (body: object, field: string) =>
      expect((await call('POST', '/response', body)).body, field).toMatchObject({ status: 'error', field });
    await refused({ body: 'Missing from field', time: 1 }, 'from');
    await refused({ from: 'invalid-phone', body: 'Test response' }, 'from');
    await refused({ from: TEST_PHONE, body: '' }, 'body');
    await refused({ from: TEST_PHONE, body: 'Test response', time: 'invalid-time' }, 'time');
    for (const path of ['/responses', '/stats', '/receipts']) expect((await call('POST', path)).status, path).toBe(405);
  });

  it('lists every send and what the channel reported, in Unix seconds', async () => {
    const participantId = await idOf(TEST_PHONE);
    const conversation = await server.store.findConversationByParticipant(participantId);
    const [first] = await server.store.listOutbox(conversation!.id);
    await server.store.markOutboxSent(first!.id, first!.sentAt!, first!.attempts, 'provider-1');
    const readAt = new Date(first!.sentAt!.getTime() + 60_000);
    await server.store.recordDeliveryReceipt({
      channel: first!.channel,
      providerMessageId: 'provider-1',
      status: 'read',
      at: readAt,
      error: null,
    });
    const receipts = (await call('GET', '/receipts')).body;
    expect(receipts.status).toBe('ok');
    const mine = receipts.result.filter((r: { to: string }) => r.to === E164);
    const sent = (await server.store.listOutbox(conversation!.id)).filter((item) => item.status === 'sent');
    expect(mine.filter((r: { status: string }) => r.status === 'sent')).toHaveLength(sent.length);
    expect(mine).toContainEqual({ to: E164, status: 'read', time: Math.floor(readAt.getTime() / 1000) });
    expect(mine.map((r: { time: number }) => r.time)).toEqual(
      [...mine.map((r: { time: number }) => r.time)].sort((a, b) => a - b),
    );
  });

  it('are in the OpenAPI document', async () => {
    const paths = Object.keys((await call('GET', '/openapi.json')).body.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/send',
        '/schedule',
        '/receipts',
        '/response',
        '/responses',
        '/stats',
        '/timers',
        '/timers/{id}',
      ]),
    );
  });
});

async function idOf(phone: string): Promise<string> {
  const list = (await call('GET', '/conversation/participants')).body.result as Array<{
    id: string;
    phone_number: string;
  }>;
  return list.find((p) => p.phone_number === `+${phone}`)!.id;
}

describe('with the offline demo model', () => {
  it('refuses a genai prompt rather than send the demo model’s canned text', async () => {
    const offline = await startTestServer();
    try {
      await offline.request('POST', '/conversation/participants', { phone_number: TEST_PHONE });
      const genai = { to: TEST_PHONE, type: 'genai', system_prompt: 'You are a coach', user_prompt: 'Motivate me' };
      expect(await offline.request('POST', '/send', genai)).toMatchObject({
        status: 400,
        body: { code: 'invalid_request', field: 'type' },
      });
      expect((await offline.request('POST', '/send', { to: TEST_PHONE, body: 'static is fine' })).status).toBe(200);
    } finally {
      await offline.close();
    }
  });
});

describe("POST /schedule without a schedule, with the Go server's DEFAULT_SCHEDULE set", () => {
  it('uses the default, read in the participant’s zone, as Go did for a request without one (or null)', async () => {
    const withDefault = await startTestServer({
      CLOCK: 'virtual',
      CLOCK_START: START, // Friday 20 March, 08:00 in Toronto
      DEFAULT_SCHEDULE: '30 7 * * 1', // Mondays 07:30
    });
    try {
      await withDefault.request('POST', '/conversation/participants', {
        phone_number: TEST_PHONE,
        timezone: 'America/Toronto',
      });
      for (const body of [
        { to: TEST_PHONE, body: 'Weekly check-in' },
        { to: TEST_PHONE, body: 'Weekly check-in', schedule: null },
      ]) {
        const created = await withDefault.request('POST', '/schedule', body);
        expect(created).toMatchObject({ status: 201, body: { status: 'ok', message: 'Scheduled successfully' } });
        expect((await withDefault.request('GET', `/timers/${created.body.result}`)).body).toMatchObject({
          type: 'recurring',
          schedule: { minute: 30, hour: 7, weekday: 1, timezone: 'America/Toronto' },
          next_run: '2026-03-23T11:30:00.000Z',
          description: 'Recurring timer with schedule schedule([minute=30 hour=7 weekday=Monday])',
        });
      }
      // A schedule given is the request's own, even an empty one (as in Go: only a missing one is replaced).
      const own = await withDefault.request('POST', '/schedule', { to: TEST_PHONE, body: 'x', schedule: {} });
      expect((await withDefault.request('GET', `/timers/${own.body.result}`)).body.schedule).toEqual({
        timezone: 'America/Toronto',
      });
    } finally {
      await withDefault.close();
    }
  });

  it('without a default, a request without a schedule is a 400 that says how to configure one', async () => {
    const response = await call('POST', '/schedule', { to: TEST_PHONE, body: 'x', schedule: null });
    expect(response).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'schedule' } });
    expect(response.body.message).toMatch(/PLATFORM_DEFAULT_SCHEDULE/);
  });
});
