import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// A web caller whose phone is known (given by the operator when the session starts, or with a
// message as spec 004's `phoneNumber`) is asked only for the ZIP (issue #22).
let offline: TestServer;
let scripted: TestServer;
const role = (request: LlmRequest) => /^\[service-desk:(\w+)\]/.exec(request.messages[0]?.content ?? '')?.[1];
const lastUser = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
const narrations: string[] = [];

beforeAll(async () => {
  const env = { CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z', DEFAULT_PHONE_REGION: 'US' };
  // A model that does what real ones do with a known phone: it passes the ZIP alone.
  const provider = createScriptedProvider((request) => {
    if (role(request) === 'acknowledge') return { text: 'One moment.' };
    if (role(request) === 'decide') {
      const zip = /\b\d{5}\b/.exec(lastUser(request))?.[0];
      if (zip) return { toolCalls: [{ name: 'verify_account', arguments: { zip } }] };
      return { toolCalls: [{ name: 'note_intent', arguments: { intent: 'cancel' } }] };
    }
    const facts = request.messages[0]!.content.split('\n').filter((line) => line.startsWith('Fact:'));
    narrations.push(facts.join('\n'));
    return { text: 'Narrated.' };
  });
  [offline, scripted] = await Promise.all([startTestServer(env), startTestServer(env, { provider })]);
});
afterAll(async () => {
  await offline?.close();
  await scripted?.close();
});

async function start(server: TestServer, body: unknown) {
  const started = await server.request('POST', '/api/conversations', body);
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const id = started.body.result.id as string;
  const client = await EventClient.connect(server.url, id, '?lastEventId=0');
  await waitFor(() => client.of('final').length === 1, { what: 'greeting' });
  const say = async (text: string, extra: Record<string, unknown> = {}) => {
    const before = client.of('final').length;
    const answer = await server.request('POST', `/api/conversations/${id}/message`, { text, ...extra });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    await waitFor(() => client.of('final').length > before, { what: `reply to ${text}` });
    return String((client.of('final').at(-1) as { text: string }).text);
  };
  return { id, client, say };
}

const verification = async (server: TestServer, id: string) =>
  (await server.store.listToolCalls(id)).filter((call) => call.name === 'verify_account');

describe('service desk: a web session started with the caller phone', () => {
  it('asks only for the ZIP, then verifies with the phone it was given (national format)', async () => {
    const { say } = await start(offline, { flow: 'service-desk', caller: { phone: '(415) 555-0100' } });
    const asked = await say('When is my next appointment?');
    expect(asked).toMatch(/5-digit ZIP code on your account\?/);
    expect(asked).not.toMatch(/phone/i);
    const verified = await say('94107');
    expect(verified).toMatch(/Alex Rivera, you're verified[\s\S]*Quarterly pest control/);
  });

  it(
    'with a model that passes the ZIP alone: ' + 'the narrator is told the phone is known, and verification uses it',
    async () => {
      const { id, say } = await start(scripted, { flow: 'service-desk', caller: { phone: '415-555-0100' } });
      narrations.length = 0;
      await say('I need to cancel something');
      expect(narrations.at(-1)).toMatch(/^Fact: Ask for the 5-digit ZIP code on the account to verify the caller/);
      expect(narrations.at(-1)).not.toMatch(/phone number and ZIP/);
      await say('it is 94107');
      const [call] = await verification(scripted, id);
      expect(JSON.parse(call!.arguments)).toEqual({ zip: '94107' });
      expect(JSON.parse(call!.result)).toMatchObject({ verified: true, customerId: 'cus_alex' });
      // A wrong ZIP is asked again for the ZIP, not for the phone and ZIP both.
      const other = await start(scripted, { flow: 'service-desk', caller: { phone: '+14155550100' } });
      await other.say('11111');
      expect(narrations.at(-1)).toMatch(/^Fact: Verification failed\. Ask again for the 5-digit ZIP code/);
    },
  );

  it("takes spec 004's phoneNumber with a message (HTTP and WebSocket), spoken digits too", async () => {
    const http = await start(offline, { flow: 'service-desk' });
    expect(await http.say('94107, when is my next appointment?', { phoneNumber: '415 555 0100' })).toMatch(
      /you're verified[\s\S]*Quarterly pest control/,
    );
    const socket = await start(scripted, { flow: 'service-desk' });
    socket.client.send({
      type: 'message',
      text: 'my zip is 94107',
      phoneNumber: 'four one five five five five oh one double oh',
      ref: 'p1',
    });
    await waitFor(() => socket.client.of('final').length === 2, { what: 'the answer' });
    expect(socket.client.of('ack')[0]).toMatchObject({ data: { ref: 'p1', duplicate: false } });
    expect(JSON.parse((await verification(scripted, socket.id))[0]!.result)).toMatchObject({ verified: true });
    expect(await scripted.store.getSessionCaller(socket.id)).toEqual({ phone: '+14155550100', person: null });
  });

  it('refuses a bad caller or phoneNumber with a 4xx naming the field, and stores nothing', async () => {
    const refused = async (body: unknown) => {
      const answer = await offline.request('POST', '/api/conversations', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      return answer.body as { code: string; field: string };
    };
    expect(await refused({ flow: 'service-desk', caller: { phone: '555' } })).toMatchObject({
      code: 'invalid_phone_number',
      field: 'caller.phone',
    });
    expect(await refused({ flow: 'service-desk', caller: {} })).toMatchObject({
      code: 'invalid_request',
      field: 'caller',
    });
    expect(await refused({ flow: 'service-desk', caller: { phone: '4155550100', zip: '94107' } })).toMatchObject({
      field: 'caller.zip',
    });
    expect(await refused({ flow: 'service-desk', caller: { id: 'crm-42' } })).toMatchObject({
      code: 'invalid_request',
      field: 'caller.id',
    });
    expect(await refused({ flow: 'echo', caller: { phone: '4155550100' } })).toMatchObject({ field: 'caller.phone' });
    expect(await refused({ flow: 'service-desk', caller: 'me' })).toMatchObject({ field: 'caller' });

    const { id } = await start(offline, { flow: 'service-desk' });
    const message = (conversation: string, body: unknown) =>
      offline.request('POST', `/api/conversations/${conversation}/message`, body);
    expect((await message(id, { text: 'hi', phoneNumber: 'call me maybe' })).body).toMatchObject({
      code: 'invalid_phone_number',
      field: 'phoneNumber',
    });
    expect((await message(id, { type: 'barge_in', phoneNumber: '4155550100' })).body).toMatchObject({
      field: 'phoneNumber',
    });
    expect(await offline.store.getSessionCaller(id)).toBeUndefined();
    const echo = (await offline.request('POST', '/api/conversations', { flow: 'echo' })).body.result.id as string;
    const onEcho = await message(echo, { text: 'hi', phoneNumber: '4155550100' });
    expect([onEcho.status, onEcho.body]).toMatchObject([400, { code: 'invalid_request', field: 'phoneNumber' }]);
    // A participant's conversation: their phone is the channel's.
    const enrolled = await offline.request('POST', '/conversation/participants', {
      phone_number: '+12125550123',
      flow: 'service-desk',
    });
    const participantId = enrolled.body.result.id as string;
    const onParticipant = await message(participantId, { text: 'hi', phoneNumber: '4155550100' });
    expect([onParticipant.status, onParticipant.body]).toMatchObject([400, { field: 'phoneNumber' }]);

    const client = await EventClient.connect(offline.url, id);
    client.send({ type: 'message', text: 'hi', phoneNumber: '12', ref: 'bad' });
    await waitFor(() => client.of('error').length === 1, { what: 'the refusal' });
    expect(client.of('error')[0]).toMatchObject({ data: { code: 'invalid_phone_number', field: 'phoneNumber' } });
    client.close();
  });
});
