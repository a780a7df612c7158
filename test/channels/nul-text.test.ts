import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { FakeTwilioApi } from '../kit/fake-twilio-api.ts';
import type { FakeWhatsAppGraph } from '../kit/fake-whatsapp-graph.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import {
  postTwilio,
  postWhatsApp,
  smsForm,
  startGraph,
  startTwilio,
  twilioEnv,
  wamid,
  whatsappEnv,
  whatsappText,
} from '../kit/provider-kit.ts';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// U+0000 is the one character PostgreSQL's text cannot hold. An API client is told (400, the field
// named); a provider's message or a model's reply keeps it as U+FFFD, on either store, and a
// message beside it in the same webhook is not lost with it.
const SMS_PHONE = '+14165550188';
const WA_ID = '16505550177';
const REPLACED = '\uFFFD';
const schemas = pgSchemas('nul_text');
let graph: FakeWhatsAppGraph;
let twilio: FakeTwilioApi;
let server: TestServer | undefined;
const provider = createScriptedProvider((request) => {
  const last = String(request.messages.at(-1)?.content);
  return { text: last.includes('say nul') ? 'before\u0000after' : `You said: ${last}` };
});

beforeAll(async () => {
  [graph, twilio] = await Promise.all([startGraph(), startTwilio()]);
});
afterAll(async () => {
  await Promise.all([graph.close(), twilio.close()]);
  await schemas.dropAll();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  graph.sent.length = 0;
  twilio.sent.length = 0;
});

const userTexts = async (s: TestServer, participantId: string) =>
  (await s.request('GET', `/conversation/participants/${participantId}/history`)).body.result.messages
    .filter((m: { role: string }) => m.role === 'user')
    .map((m: { text: string }) => m.text);

describe.each([
  ['SQLite', () => ({})],
  ['PostgreSQL', () => schemas.next()],
])('U+0000 on %s', (_name, storeEnv) => {
  async function start() {
    const s = await startTestServer(
      { CLOCK: 'virtual', ...storeEnv(), ...whatsappEnv(graph), ...twilioEnv(twilio) },
      { provider },
    );
    server = s;
    const enrol = async (phone: string, channel: string) => {
      const created = await s.request('POST', '/conversation/participants', { phone_number: phone, channel });
      expect(created.status).toBe(201);
      return created.body.result.id as string;
    };
    return { s, enrol };
  }

  it('is refused in an API request, with the field named, and nothing is recorded', async () => {
    const { s, enrol } = await start();
    const participantId = await enrol(SMS_PHONE, 'twilio');
    const refused = [
      await s.request('POST', '/conversation/inbound', { from: SMS_PHONE, text: 'hi\u0000there' }),
      await s.request('POST', '/conversation/participants', { phone_number: '+14165550111', name: 'A\u0000' }),
      await s.request('GET', '/conversation/participants/%00'),
      await s.request('GET', '/conversation/participants?cohort=%00'),
      // Half of a surrogate pair: UTF-8 cannot encode it, so neither store could keep it as sent.
      await s.request('POST', '/conversation/participants', { phone_number: '+14165550112', name: 'A\ud800' }),
    ];
    expect(refused.map((response) => [response.status, response.body.code, response.body.field])).toEqual([
      [400, 'invalid_request', 'text'],
      [400, 'invalid_request', 'name'],
      [400, 'invalid_request', 'id'],
      [400, 'invalid_request', 'cohort'],
      [400, 'invalid_request', 'name'],
    ]);
    expect(refused[0]!.body.message).toContain('NUL');
    expect(refused[4]!.body.message).toBe('name: must not contain an unpaired surrogate (U+D800 to U+DFFF)');
    const paired = await s.request('POST', '/conversation/participants', { phone_number: '+14165550113', name: 'A😀' });
    expect(paired).toMatchObject({ status: 201, body: { result: { name: 'A😀' } } });
    expect(await userTexts(s, participantId)).toEqual([]);
  });

  it('is kept as U+FFFD in a Twilio message, which is answered', async () => {
    const { s, enrol } = await start();
    const participantId = await enrol(SMS_PHONE, 'twilio');
    await twilio.waitForSent(1);
    const response = await postTwilio(s, '/webhooks/twilio', smsForm(SMS_PHONE, 'hi\u0000there'));
    expect(response.status).toBe(200);
    await waitFor(() => twilio.bodies().includes(`You said: hi${REPLACED}there`), { what: 'the reply' });
    expect(await userTexts(s, participantId)).toEqual([`hi${REPLACED}there`]);
  });

  it('does not take the other messages of a WhatsApp webhook down with it', async () => {
    const { s, enrol } = await start();
    const participantId = await enrol(`+${WA_ID}`, 'whatsapp');
    await graph.waitForSent(1);
    const payload = whatsappText('hello', { waId: WA_ID });
    const messages = payload.entry[0].changes[0].value.messages;
    messages.push({ ...messages[0], id: wamid(), text: { body: 'bad\u0000byte' } });
    const response = await postWhatsApp(s, payload);
    expect(response).toMatchObject({ status: 200, body: { messages: 2 } });
    await waitFor(async () => (await userTexts(s, participantId)).length === 2, { what: 'both messages recorded' });
    expect(await userTexts(s, participantId)).toEqual(['hello', `bad${REPLACED}byte`]);
  });

  it('is kept as U+FFFD in a reply streamed over the socket; a chat history holding it is not refused', async () => {
    const { s, enrol } = await start();
    const id = await enrol(SMS_PHONE, 'twilio');
    await twilio.waitForSent(1);
    const client = await EventClient.connect(s.url, id);
    try {
      await client.waitFor((event) => event.type === 'resync', 'the snapshot');
      await s.request('POST', '/conversation/inbound', { from: SMS_PHONE, text: 'say nul' });
      await client.waitFor((event) => event.type === 'final' && event.text.endsWith('after'), 'the final');
      const streamed = client.of('token').map((event) => (event.type === 'token' ? event.text : ''));
      expect(streamed.join('')).toBe(`before${REPLACED}after`);
    } finally {
      client.close();
    }
    // useChat sends back every message it has seen, this reply as it streamed included.
    const text = (value: string) => [{ type: 'text', text: value }];
    const chat = await s.request('POST', `/api/conversations/${id}/chat`, {
      messages: [
        { id: 'u1', role: 'user', parts: text('say nul') },
        { id: 'a1', role: 'assistant', parts: text('before\u0000after') },
        { id: 'u2', role: 'user', parts: text('and\u0000again') },
      ],
    });
    expect(chat.status).toBe(200);
    expect(await userTexts(s, id)).toContain(`and${REPLACED}again`);
  });

  it('is looked for without recursion: a body nested thousands deep is a 400, with or without it', async () => {
    const { s } = await start();
    const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
    const post = (body: string) =>
      s.request('POST', '/conversation/participants', body, { 'content-type': 'application/json' });
    expect(await post(nested(20_000, '"\\u0000"'))).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(await post(nested(20_000, '0'))).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });

  it("is kept as U+FFFD in a model's reply, which is delivered", async () => {
    const { s, enrol } = await start();
    await enrol(SMS_PHONE, 'twilio');
    await twilio.waitForSent(1);
    expect((await s.request('POST', '/conversation/inbound', { from: SMS_PHONE, text: 'say nul' })).status).toBe(202);
    await waitFor(() => twilio.bodies().includes(`before${REPLACED}after`), { what: 'the reply delivered' });
  });
});
