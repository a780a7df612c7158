import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { connect } from 'node:net';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, { provider: createScriptedProvider(() => ({ text: 'Hi, welcome!' })) });
});
afterAll(() => server.close());

const enrol = (body: unknown) => server.request('POST', '/conversation/participants', body);

describe('enrollment', () => {
  it('canonicalises the phone number, stores the time zone, answers 201 and greets', async () => {
    const response = await enrol({
      phone_number: '+1 (416) 555-0123',
      name: 'Alice',
      timezone: 'America/Toronto',
      background: 'Student',
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      status: 'ok',
      message: expect.any(String),
      result: { phone_number: '+14165550123', name: 'Alice', timezone: 'America/Toronto', status: 'active' },
    });
    await server.sink.waitFor(1);
    expect(server.sink.to('+14165550123').map((message) => message.text)).toEqual(['Hi, welcome!']);

    const history = await server.request('GET', `/conversation/participants/${response.body.result.id}/history`);
    expect(history.body.result.messages).toEqual([
      expect.objectContaining({ role: 'assistant', text: 'Hi, welcome!', seq: 1 }),
    ]);
  });

  it('stores time zones in their canonical spelling, whatever their case, and accepts EST5EDT', async () => {
    const lower = await enrol({ phone_number: '+14165550141', timezone: 'america/toronto' });
    expect(lower).toMatchObject({ status: 201, body: { result: { timezone: 'America/Toronto' } } });
    const posix = await enrol({ phone_number: '+14165550142', timezone: 'EST5EDT' });
    expect(posix).toMatchObject({ status: 201, body: { result: { timezone: 'EST5EDT' } } });
    const updated = await server.request('PUT', `/conversation/participants/${posix.body.result.id}`, {
      timezone: 'europe/berlin',
    });
    expect(updated).toMatchObject({ status: 200, body: { result: { timezone: 'Europe/Berlin' } } });
    expect((await server.store.getParticipant(lower.body.result.id))?.timezone).toBe('America/Toronto');
  });

  it('refuses a duplicate phone number with 409, whatever its format', async () => {
    await enrol({ phone_number: '+14165550124' });
    const duplicate = await enrol({ phone_number: '+1 416 555 0124' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({ status: 'error', code: 'participant_exists', field: 'phone_number' });
  });

  it('creates exactly one participant under concurrent duplicate enrollments', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => enrol({ phone_number: '+14165550199' })));
    expect(responses.map((response) => response.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const list = await server.request('GET', '/conversation/participants');
    expect(
      list.body.result.filter((participant: { phone_number: string }) => participant.phone_number === '+14165550199'),
    ).toHaveLength(1);
  });

  it.each([
    [{ phone_number: '12345' }, 'invalid_phone_number', 'phone_number'],
    [{ phone_number: '+1 555' }, 'invalid_phone_number', 'phone_number'],
    [{ phone_number: '+14165550125', timezone: 'Mars/Olympus' }, 'invalid_timezone', 'timezone'],
    [{}, 'invalid_request', 'phone_number'],
    [{ phone_number: 14165550125 }, 'invalid_request', 'phone_number'],
    [{ phone_number: '+14165550125', name: ['x'] }, 'invalid_request', 'name'],
    [{ phone_number: '+14165550125', timeZone: 'UTC' }, 'invalid_request', 'timeZone'],
    [[], 'invalid_request', 'body'],
  ])('rejects %j with %s naming %s', async (body, code, field) => {
    const response = await enrol(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 'error', code, field });
    expect(response.body.message).toContain(field === 'body' ? '' : field);
  });

  it('tells a field of the wrong type from a missing one', async () => {
    expect((await enrol({})).body.message).toBe('phone_number: is required');
    expect((await enrol({ phone_number: 14165550125 })).body.message).toBe(
      'phone_number: must be of type string (got a number)',
    );
    expect((await enrol({ phone_number: '+14165550125', name: ['x'] })).body.message).toBe(
      'name: must be of type string (got an array)',
    );
    expect((await enrol([])).body.message).toBe('body: must be of type object (got an array)');
  });

  it('answers router errors (bad percent-encoding, an over-long path segment) in the error envelope', async () => {
    for (const path of ['/conversation/participants/%ZZ', `/conversation/participants/${'p'.repeat(150)}`]) {
      expect(await server.request('GET', path)).toMatchObject({
        status: 400,
        body: { status: 'error', code: 'invalid_request', field: 'url' },
      });
    }
  });

  it('answers what the HTTP parser refuses (oversized headers, not HTTP) in the error envelope', async () => {
    const oversized = await rawExchange(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(oversized.head).toMatch(/^HTTP\/1.1 431 /);
    expect(JSON.parse(oversized.body)).toEqual({
      status: 'error',
      code: 'headers_too_large',
      message: 'the request headers are larger than the server accepts (16 KiB)',
      field: 'headers',
    });
    const garbage = await rawExchange('HELLO THERE\r\n\r\n');
    expect(garbage.head).toMatch(/^HTTP\/1.1 400 /);
    expect(JSON.parse(garbage.body)).toMatchObject({ code: 'invalid_request', field: 'request' });
  });

  it('rejects malformed JSON, prototype pollution, the wrong media type and oversized bodies', async () => {
    const malformed = await server.request('POST', '/conversation/participants', '{"phone_number": ');
    expect(malformed).toMatchObject({ status: 400, body: { code: 'invalid_json' } });

    const polluted = await server.request(
      'POST',
      '/conversation/participants',
      '{"phone_number":"+14165550126","__proto__":{"admin":true}}',
    );
    expect(polluted).toMatchObject({
      status: 400,
      body: { code: 'invalid_json', message: 'the body contains a forbidden key (__proto__ or constructor.prototype)' },
    });
    const constructor = await server.request(
      'POST',
      '/conversation/participants',
      '{"phone_number":"+14165550126","constructor":{"prototype":{"admin":true}}}',
    );
    expect(constructor).toMatchObject({ status: 400, body: { code: 'invalid_json', message: /forbidden key/ } });

    const text = await server.request('POST', '/conversation/participants', 'phone_number=+14165550126', {
      'content-type': 'text/plain',
    });
    expect(text).toMatchObject({ status: 415, body: { code: 'unsupported_media_type' } });

    const huge = await enrol({ phone_number: '+14165550126', background: 'x'.repeat(300_000) });
    expect(huge).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });

    const list = await server.request('GET', '/conversation/participants');
    expect(
      list.body.result.some((participant: { phone_number: string }) => participant.phone_number === '+14165550126'),
    ).toBe(false);
  });
});

describe('a paused participant', () => {
  it('has their message acknowledged as recorded, kept and not answered; once active again, answered', async () => {
    const phone = '+14165550131';
    const id = (await enrol({ phone_number: phone })).body.result.id;
    await waitFor(() => server.sink.to(phone).length === 1, { what: 'greeting' });
    const say = (text: string) => server.request('POST', '/conversation/inbound', { from: phone, text });
    expect((await say('first')).body.result).toMatchObject({ status: 'queued' }); // now a sender this process knows
    await waitFor(() => server.sink.to(phone).length === 2, { what: 'the reply' });

    await server.request('PUT', `/conversation/participants/${id}`, { status: 'paused' });
    const whilePaused = await say('are you there?');
    expect(whilePaused).toMatchObject({
      status: 202,
      body: { message: expect.stringContaining('not active'), result: { status: 'recorded', participant_id: id } },
    });
    await server.engine.idle();
    const history = await server.request('GET', `/conversation/participants/${id}/history`);
    expect(history.body.result.messages.at(-1)).toMatchObject({ role: 'user', text: 'are you there?' });
    expect(server.sink.to(phone)).toHaveLength(2);

    await server.request('PUT', `/conversation/participants/${id}`, { status: 'active' });
    expect((await say('back')).body.result).toMatchObject({ status: 'queued' });
    await waitFor(() => server.sink.to(phone).length === 3, { what: 'the reply once active' });
  });
});

describe('participant resource', () => {
  it('gets, updates, validates updates and deletes with a goodbye', async () => {
    const created = await enrol({ phone_number: '+14165550130', timezone: 'UTC' });
    const id = created.body.result.id;
    await waitFor(() => server.sink.to('+14165550130').length === 1, { what: 'greeting' });

    expect((await server.request('GET', `/conversation/participants/${id}`)).body.result).toMatchObject({
      id,
      timezone: 'UTC',
    });

    const updated = await server.request('PUT', `/conversation/participants/${id}`, {
      status: 'paused',
      timezone: 'Europe/Paris',
      name: 'Bo',
    });
    expect(updated).toMatchObject({
      status: 200,
      body: { result: { status: 'paused', timezone: 'Europe/Paris', name: 'Bo' } },
    });

    expect(await server.request('PUT', `/conversation/participants/${id}`, { status: 'sleeping' })).toMatchObject({
      status: 400,
      body: { field: 'status' },
    });
    expect(await server.request('PUT', `/conversation/participants/${id}`, { timezone: 'Nowhere/City' })).toMatchObject(
      { status: 400, body: { code: 'invalid_timezone' } },
    );
    expect(await server.request('PUT', `/conversation/participants/${id}`, {})).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });

    const state = await server.request('GET', `/conversation/participants/${id}/state`);
    expect(state.body.result).toMatchObject({ state: 'CONVERSATION_ACTIVE', sub_state: 'INTAKE', status: 'paused' });

    // Sent as many clients send every request: with a JSON content type and no body.
    const json = { 'content-type': 'application/json' };
    expect((await server.request('DELETE', `/conversation/participants/${id}`, undefined, json)).status).toBe(200);
    expect(server.sink.to('+14165550130').at(-1)?.text).toMatch(/unenrolled/i);
    expect(await server.request('GET', `/conversation/participants/${id}`)).toMatchObject({
      status: 404,
      body: { code: 'participant_not_found' },
    });
    expect(await server.request('GET', `/conversation/participants/${id}/history`)).toMatchObject({ status: 404 });
    expect(await server.request('DELETE', `/conversation/participants/${id}`)).toMatchObject({ status: 404 });
  });

  it('says goodbye once when removals race: the one that deletes answers 200, the others 404', async () => {
    const created = await enrol({ phone_number: '+14165550188', timezone: 'UTC' });
    const id = created.body.result.id;
    await waitFor(() => server.sink.to('+14165550188').length === 1, { what: 'greeting' });

    const answers = await Promise.all(
      [1, 2, 3].map(() => server.request('DELETE', `/conversation/participants/${id}`)),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 404, 404]);
    // Each removal sends its goodbye before it answers: all that will come has come.
    expect(server.sink.to('+14165550188').filter((m) => /unenrolled/i.test(m.text))).toHaveLength(1);
  });

  it('answers 404 for unknown participants and 405 with Allow for wrong methods', async () => {
    expect(await server.request('GET', '/conversation/participants/part_nope')).toMatchObject({
      status: 404,
      body: { code: 'participant_not_found' },
    });
    expect(await server.request('PUT', '/conversation/participants/part_nope', { name: 'x' })).toMatchObject({
      status: 404,
    });
    const wrong = await server.request('PATCH', '/conversation/participants');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, POST');
    expect(wrong.body.code).toBe('method_not_allowed');
    expect((await server.request('GET', '/nowhere')).body.code).toBe('not_found');
  });

  it('answers a plain GET or HEAD of the WebSocket path with the error envelope, not an empty 404', async () => {
    const session = await server.request('POST', '/api/conversations', { flow: 'echo' });
    const path = `/api/conversations/${session.body.result.id}/socket`;
    expect(await server.request('GET', path)).toMatchObject({
      status: 400,
      body: { status: 'error', code: 'invalid_request', field: 'upgrade' },
    });
    const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
    expect(head.status).toBe(400);
    expect(head.headers.get('content-type')).toContain('application/json');
  });

  it('rejects an unknown inbound field like every other route, naming it, and stores nothing', async () => {
    const before = (await server.store.listPendingInbox()).length;
    const response = await server.request('POST', '/conversation/inbound', {
      from: '+14165550178',
      text: 'hi',
      messageId: 'm1',
    });
    expect(response).toMatchObject({
      status: 400,
      body: { status: 'error', code: 'invalid_request', field: 'messageId' },
    });
    expect(response.body.message).toContain('unknown field(s) "messageId"');
    expect(await server.store.listPendingInbox()).toHaveLength(before);
    expect(await server.store.firstInboxFrom('http', '+14165550178', new Date(0))).toBeUndefined();
  });

  it('names the inbound sender field when its number is invalid', async () => {
    expect(await server.request('POST', '/conversation/inbound', { from: 'abc', text: 'hi' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_phone_number', field: 'from' },
    });
    expect(await server.request('POST', '/conversation/inbound', { from: '+14165550177', text: '   ' })).toMatchObject({
      status: 400,
      body: { field: 'text' },
    });
  });

  it('validates list queries', async () => {
    expect(await server.request('GET', '/conversation/participants?status=bogus')).toMatchObject({
      status: 400,
      body: { field: 'status' },
    });
    expect(await server.request('GET', '/conversation/participants?limit=0')).toMatchObject({
      status: 400,
      body: { field: 'limit' },
    });
    // Only decimal digits: a coercion read these as 16, 100 and 0.
    for (const query of ['limit=0x10', 'limit=1e2', 'limit=', 'offset=-1'])
      expect(await server.request('GET', `/conversation/participants?${query}`)).toMatchObject({
        status: 400,
        body: {
          code: 'invalid_request',
          message: expect.stringMatching(/must be a whole number from (1 to 1000|0 to)/),
        },
      });
    for (const name of ['limit', 'status'])
      expect(await server.request('GET', `/conversation/participants?${name}=1&${name}=2`)).toMatchObject({
        status: 400,
        body: { code: 'invalid_request', field: name, message: `${name}: is given more than once` },
      });
    const active = await server.request('GET', '/conversation/participants?status=active&limit=2');
    expect(active.status).toBe(200);
    expect(active.body.result.length).toBeLessThanOrEqual(2);
  });

  it('keeps a cohort set at enrolment or later, and filters the list by it', async () => {
    const armA = await server.request('POST', '/conversation/participants', {
      phone_number: '+14165550261',
      cohort: 'arm-A',
    });
    expect(armA).toMatchObject({ status: 201, body: { result: { cohort: 'arm-A' } } });
    const later = (await server.request('POST', '/conversation/participants', { phone_number: '+14165550262' })).body
      .result;
    expect(later.cohort).toBeNull();
    expect(await server.request('PUT', `/conversation/participants/${later.id}`, { cohort: 'arm-A' })).toMatchObject({
      status: 200,
      body: { result: { cohort: 'arm-A' } },
    });
    const tooLong = await server.request('POST', '/conversation/participants', {
      phone_number: '+14165550263',
      cohort: 'x'.repeat(101),
    });
    expect(tooLong).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'cohort' } });
    expect(await server.request('GET', '/conversation/participants?cohort=')).toMatchObject({
      status: 400,
      body: { field: 'cohort' },
    });
    const listed = await server.request('GET', '/conversation/participants?cohort=arm-A&limit=1');
    expect(listed.body).toMatchObject({ total: 2, next: '/conversation/participants?limit=1&offset=1&cohort=arm-A' });
    expect(listed.body.result.map((p: { cohort: string }) => p.cohort)).toEqual(['arm-A']);
  });

  it('pages honestly: the total, and a next link (body and Link header) until the last page', async () => {
    const total = (await server.request('GET', '/conversation/participants')).body.total as number;
    expect(total).toBeGreaterThanOrEqual(3);
    const seen: string[] = [];
    let path: string | null = '/conversation/participants?limit=2';
    for (let pages = 0; path; pages++) {
      const page: Awaited<ReturnType<typeof server.request>> = await server.request('GET', path);
      expect(page.body).toMatchObject({ status: 'ok', total, limit: 2 });
      seen.push(...page.body.result.map((participant: { id: string }) => participant.id));
      path = page.body.next;
      expect(page.headers.get('link')).toBe(path ? `<${path}>; rel="next"` : null);
      expect(pages).toBeLessThan(total);
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });

  it('serves health and an OpenAPI document built from the validating schemas', async () => {
    const health = await server.request('GET', '/health');
    expect(health).toMatchObject({
      status: 200,
      body: { status: 'ok', store: 'sqlite', store_ok: true, model: { provider: 'scripted' } },
    });
    // Nothing waits once the enrolments above are answered and delivered.
    await server.settle();
    expect((await server.request('GET', '/health')).body.queues).toEqual({
      turns: 0,
      inbox_pending: 0,
      oldest_inbox_age_s: null,
      outbox_pending: 0,
      oldest_outbox_age_s: null,
      timers_overdue: 0,
      timer_lateness_s: null,
    });
    const openapi = await server.request('GET', '/openapi.json');
    expect(openapi.body.openapi).toMatch(/^3\./);
    const enrolSchema =
      openapi.body.paths['/conversation/participants'].post.requestBody.content['application/json'].schema;
    expect(enrolSchema.required).toEqual(['phone_number']);
    expect(Object.keys(openapi.body.paths)).toEqual(
      expect.arrayContaining(['/conversation/inbound', '/conversation/participants/{id}/history']),
    );
  });
});

/** Writes raw bytes on a new connection and reads until the server closes it. */
function rawExchange(request: string): Promise<{ head: string; body: string }> {
  const { port, hostname } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      resolve({ head, body });
    });
  });
}
