import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { twilioSignature as productionSignature, twilioSignatureValid } from '../../src/channels/signatures.ts';
import { UNSUPPORTED_CONTENT_REPLY } from '../../src/engine/inbound-message.ts';
import { SMS_HELP_TEXT } from '../../src/http/twilio-routes.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { FakeTwilioApi } from '../kit/fake-twilio-api.ts';
import { fixture, postTwilio, smsForm, startTwilio, TW, twilioEnv } from '../kit/provider-kit.ts';
import { TWILIO_DOCS_EXAMPLE, twilioSignature } from '../kit/provider-signatures.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// Twilio Programmable Messaging (SMS) over real sockets: signed form webhooks in, the REST
// Messages API (a local fake) out (WIRE-FORMATS §3, issue #7).
const PHONE = '+14165550199';
let api: FakeTwilioApi;
let server: TestServer | undefined;
const provider = createScriptedProvider((request) => ({ text: `You said: ${request.messages.at(-1)?.content}` }));

beforeAll(async () => {
  api = await startTwilio();
});
afterAll(() => api.close());
afterEach(async () => {
  await server?.close();
  server = undefined;
  api.sent.length = 0;
  api.attempts.length = 0;
  api.failures = [];
});

async function start(env: Record<string, string> = {}) {
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z', ...twilioEnv(api), ...env },
    { provider },
  );
  return server;
}

async function enrolled(env: Record<string, string> = {}) {
  const s = await start(env);
  const created = await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'twilio' });
  expect(created.status).toBe(201);
  await api.waitForSent(1);
  return { s, participantId: created.body.result.id as string };
}

const userTexts = async (s: TestServer, participantId: string) =>
  (await s.request('GET', `/conversation/participants/${participantId}/history`)).body.result.messages
    .filter((m: any) => m.role === 'user')
    .map((m: any) => m.text);

describe('signature vectors', () => {
  it("reproduces Twilio's documentation example, whatever order the parameters come in", () => {
    const { authToken, url, params, signature } = TWILIO_DOCS_EXAMPLE;
    const entries = Object.entries(params);
    expect(productionSignature(authToken, url, entries)).toBe(signature);
    expect(productionSignature(authToken, url, [...entries].reverse())).toBe(signature);
    expect(twilioSignatureValid(authToken, url, entries, signature)).toBe(true);
    expect(twilioSignatureValid(authToken, `${url}&baz=3`, entries, signature)).toBe(false);
    expect(twilioSignatureValid(authToken, url, [...entries, ['Extra', '1']], signature)).toBe(false);
    expect(twilioSignatureValid('54321', url, entries, signature)).toBe(false);
    expect(twilioSignatureValid(authToken, url, entries, undefined)).toBe(false);
  });

  it("accepts a signature made for the URL with or without the scheme's default port, as Twilio's SDK does", () => {
    const { authToken, params } = TWILIO_DOCS_EXAMPLE;
    const entries = Object.entries(params);
    const plain = 'https://pp.example.org/webhooks/twilio?x=1';
    const withPort = 'https://pp.example.org:443/webhooks/twilio?x=1';
    expect(twilioSignatureValid(authToken, plain, entries, productionSignature(authToken, withPort, entries))).toBe(
      true,
    );
    expect(twilioSignatureValid(authToken, withPort, entries, productionSignature(authToken, plain, entries))).toBe(
      true,
    );
    expect(
      twilioSignatureValid(
        authToken,
        plain,
        entries,
        productionSignature(authToken, 'https://pp.example.org:8443/webhooks/twilio?x=1', entries),
      ),
    ).toBe(false);
  });
});

describe('inbound SMS', () => {
  it('answers empty TwiML at once and sends the reply through the REST API', async () => {
    await enrolled();
    const response = await postTwilio(server!, '/webhooks/twilio', smsForm(PHONE, 'Walked today'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(response.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
    await api.waitForSent(2);
    expect(api.sent[1]).toMatchObject({
      accountSid: TW.accountSid,
      params: { To: PHONE, From: TW.from, Body: 'You said: Walked today' },
    });
    expect(api.sent[1]!.params.StatusCallback).toBeUndefined();
  });

  it('refuses a wrongly signed, tampered or unsigned webhook without storing it', async () => {
    const { s, participantId } = await enrolled();
    const form = smsForm(PHONE, 'sneaky');
    const url = `${s.url}/webhooks/twilio`;
    const refused = [
      await postTwilio(s, '/webhooks/twilio', form, { signature: null }),
      await postTwilio(s, '/webhooks/twilio', form, { signature: twilioSignature('wrong-token', url, form) }),
      await postTwilio(
        s,
        '/webhooks/twilio',
        { ...form, Body: 'tampered' },
        { signature: twilioSignature(TW.authToken, url, form) },
      ),
      await postTwilio(s, '/webhooks/twilio', form, { url: 'https://elsewhere.example/webhooks/twilio' }),
    ];
    expect(refused.map((r) => [r.status, r.body.code])).toEqual(Array(4).fill([401, 'invalid_signature']));
    await s.engine.idle();
    expect(await userTexts(s, participantId)).toEqual([]);
  });

  it('behind a proxy: checks the signature against PUBLIC_BASE_URL and asks for status callbacks there', async () => {
    await enrolled({ PUBLIC_BASE_URL: 'https://pp.example.org' });
    expect(api.sent[0]!.params.StatusCallback).toBe('https://pp.example.org/webhooks/twilio/status');
    const form = smsForm(PHONE, 'via the proxy');
    expect((await postTwilio(server!, '/webhooks/twilio', form)).status).toBe(401); // signed for the local URL
    expect(
      (await postTwilio(server!, '/webhooks/twilio', form, { url: 'https://pp.example.org/webhooks/twilio' })).status,
    ).toBe(200);
    await api.waitForSent(2);
  });

  it('names a missing field, and refuses a JSON body', async () => {
    const s = await start();
    const { MessageSid: _sid, ...noSid } = smsForm(PHONE, 'x');
    expect((await postTwilio(s, '/webhooks/twilio', noSid)).body).toMatchObject({
      code: 'invalid_request',
      field: 'MessageSid',
    });
    expect((await s.request('POST', '/webhooks/twilio', { Body: 'x' })).status).toBe(415);
  });

  it('an MMS without text is answered politely, without a model turn', async () => {
    await enrolled();
    const calls = provider.requests.length;
    await postTwilio(server!, '/webhooks/twilio', {
      ...fixture('twilio', 'inbound-mms'),
      From: PHONE,
      AccountSid: TW.accountSid,
    });
    await api.waitForSent(2);
    expect(api.sent[1]!.params.Body).toBe(UNSUPPORTED_CONTENT_REPLY);
    expect(provider.requests.length).toBe(calls);
  });

  it('one SMS delivered 5 times at once and again after a restart: one turn, one reply', async () => {
    const database = tempSqliteUrl();
    const { s, participantId } = await enrolled({ DATABASE_URL: database });
    const form = smsForm(PHONE, 'only once');
    const answers = await Promise.all(Array.from({ length: 5 }, () => postTwilio(s, '/webhooks/twilio', form)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    await api.waitForSent(2);
    await s.engine.idle();
    await s.close();
    server = await start({ DATABASE_URL: database });
    expect((await postTwilio(server, '/webhooks/twilio', form)).status).toBe(200);
    await server.settle();
    expect(api.bodies().filter((body) => body === 'You said: only once')).toHaveLength(1);
    expect(await userTexts(server, participantId)).toEqual(['only once']);
  });
});

describe('which channel replies use', () => {
  it(
    'enrollment names a configured channel or gets a clear error; replies follow the person to the channel ' +
      'they last wrote on',
    async () => {
      const s = await start();
      const bad = await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'whatsapp' });
      expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'channel' } });
      expect(bad.body.message).toContain('must be one of twilio, webhook (');
      // The web channel counts a reply delivered whoever watches: no participant is reached on it.
      const web = await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'web' });
      expect(web).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'channel' } });
      expect(web.body.message).toContain('web is for web sessions');
      // Default: the first provider channel.
      const created = await s.request('POST', '/conversation/participants', { phone_number: PHONE });
      const channelOf = async (id: string) =>
        (await s.request('GET', `/conversation/participants/${id}/state`)).body.result.channel;
      expect(await channelOf(created.body.result.id)).toBe('twilio');
      await api.waitForSent(1);

      const other = '+14165550142';
      const onWebhook = await s.request('POST', '/conversation/participants', {
        phone_number: other,
        channel: 'webhook',
      });
      await s.engine.idle();
      expect(await channelOf(onWebhook.body.result.id)).toBe('webhook');
      await postTwilio(s, '/webhooks/twilio', smsForm(other, 'texting now'));
      await api.waitForSent(2);
      expect(await channelOf(onWebhook.body.result.id)).toBe('twilio');
      expect(api.to(other).map((send) => send.params.Body)).toEqual(['You said: texting now']);
    },
  );
});

describe('long texts', () => {
  it('a reply longer than one SMS goes out in parts, split between sentences', async () => {
    const long = Array.from({ length: 60 }, (_, i) => `Sentence number ${i + 1} is here.`).join(' ');
    const longProvider = createScriptedProvider(() => ({ text: long }));
    server = await startTestServer(
      { CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z', ...twilioEnv(api) },
      { provider: longProvider },
    );
    await server.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'twilio' });
    await api.waitForSent(2);
    const bodies = api.bodies();
    expect(bodies.every((body) => body.length <= 1600)).toBe(true);
    expect(bodies.join(' ')).toBe(long);
    expect(bodies[0]!.endsWith('.')).toBe(true);
  });
});

describe('STOP, START and HELP', () => {
  it('STOP pauses the participant before any turn and nothing is sent after it; START resumes', async () => {
    const { s, participantId } = await enrolled();
    const calls = provider.requests.length;
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'Stop'));
    expect((await s.request('GET', `/conversation/participants/${participantId}`)).body.result.status).toBe('paused');
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'are you there?'));
    await s.settle();
    expect(api.sent).toHaveLength(1);
    expect(provider.requests.length).toBe(calls);
    expect(await userTexts(s, participantId)).toEqual(['are you there?']); // kept, not answered

    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'START'));
    expect((await s.request('GET', `/conversation/participants/${participantId}`)).body.result.status).toBe('active');
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'hello again'));
    await api.waitForSent(2);
    expect(api.sent[1]!.params.Body).toBe('You said: hello again');
  });

  it('a replayed STOP does not undo a later START', async () => {
    const { s, participantId } = await enrolled();
    const stop = smsForm(PHONE, 'STOP');
    await postTwilio(s, '/webhooks/twilio', stop);
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'start'));
    await postTwilio(s, '/webhooks/twilio', stop);
    expect((await s.request('GET', `/conversation/participants/${participantId}`)).body.result.status).toBe('active');
  });

  it('"yes" from someone who never opted out is an ordinary answer', async () => {
    await enrolled();
    await postTwilio(server!, '/webhooks/twilio', smsForm(PHONE, 'Yes'));
    await api.waitForSent(2);
    expect(api.sent[1]!.params.Body).toBe('You said: Yes');
  });

  it('HELP gets the fixed answer without a turn', async () => {
    await enrolled();
    const calls = provider.requests.length;
    await postTwilio(server!, '/webhooks/twilio', smsForm(PHONE, 'help'));
    await api.waitForSent(2);
    expect(api.sent[1]!.params.Body).toBe(SMS_HELP_TEXT);
    expect(provider.requests.length).toBe(calls);
  });

  it('a message queued before STOP is not sent after it', async () => {
    api.failures = [{ status: 500, code: 20500 }];
    const { s, participantId } = await (async () => {
      const started = await start();
      const created = await started.request('POST', '/conversation/participants', {
        phone_number: PHONE,
        channel: 'twilio',
      });
      return { s: started, participantId: created.body.result.id as string };
    })();
    await waitFor(() => api.attempts.length === 1, { what: 'first attempt' });
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'STOP'));
    await s.request('POST', '/admin/clock', { advance: '1m' });
    const conversationId = (await s.store.findConversationByParticipant(participantId))!.id;
    await waitFor(async () => (await s.store.listOutbox(conversationId))[0]?.status === 'failed', {
      what: 'greeting given up',
    });
    expect((await s.store.listOutbox(conversationId))[0]!.lastError).toMatch(/opted out/);
    expect(api.sent).toHaveLength(0);
  });
});

describe('status callbacks', () => {
  it('record delivery, tolerate order and repeats, and are signed too', async () => {
    const { s, participantId } = await enrolled();
    const conversationId = (await s.store.findConversationByParticipant(participantId))!.id;
    await waitFor(async () => (await s.store.listOutbox(conversationId))[0]?.status === 'sent', {
      what: 'greeting sent',
    });
    const [greeting] = await s.store.listOutbox(conversationId);
    const sid = greeting!.providerMessageId!;
    expect(sid).toMatch(/^SM[0-9a-f]{32}$/);
    const callback = (status: string, extra: Record<string, string> = {}) => ({
      ...fixture('twilio', 'status-delivered'),
      MessageSid: sid,
      SmsSid: sid,
      MessageStatus: status,
      SmsStatus: status,
      AccountSid: TW.accountSid,
      ...extra,
    });
    expect((await postTwilio(s, '/webhooks/twilio/status', callback('delivered'))).status).toBe(204);
    expect((await postTwilio(s, '/webhooks/twilio/status', callback('sent'))).status).toBe(204);
    expect((await postTwilio(s, '/webhooks/twilio/status', callback('queued'))).status).toBe(204);
    expect((await postTwilio(s, '/webhooks/twilio/status', callback('delivered'))).status).toBe(204);
    expect(await s.store.getOutbox(greeting!.id)).toMatchObject({ deliveryStatus: 'delivered' });
    expect(
      (await postTwilio(s, '/webhooks/twilio/status', callback('undelivered'), { signature: 'bogus' })).status,
    ).toBe(401);

    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'hi'));
    await api.waitForSent(2);
    await waitFor(async () => (await s.store.listOutbox(conversationId)).at(-1)?.status === 'sent', {
      what: 'reply sent',
    });
    const reply = (await s.store.listOutbox(conversationId)).at(-1)!;
    await postTwilio(s, '/webhooks/twilio/status', {
      ...callback('undelivered', { ErrorCode: '30003' }),
      MessageSid: reply.providerMessageId!,
      SmsSid: reply.providerMessageId!,
    });
    expect(await s.store.getOutbox(reply.id)).toMatchObject({
      deliveryStatus: 'failed',
      deliveryError: 'Twilio error 30003',
    });

    const deliveries = (await s.request('GET', `/conversation/participants/${participantId}/deliveries`)).body.result;
    expect(deliveries.map((d: any) => [d.channel, d.status, d.delivery_status, d.provider_message_id])).toEqual([
      ['twilio', 'sent', 'delivered', sid],
      ['twilio', 'sent', 'failed', reply.providerMessageId],
    ]);
    expect(deliveries[1]).toMatchObject({ text: 'You said: hi', delivery_error: 'Twilio error 30003', attempts: 1 });
    expect((await s.request('GET', `/conversation/participants/${participantId}/state`)).body.result.channel).toBe(
      'twilio',
    );
  });
});

describe('REST failures', () => {
  it('gives up at once when Twilio says the recipient unsubscribed (21610); pauses them as a STOP would', async () => {
    api.failures = [{ status: 400, code: 21610 }];
    const s = await start();
    const created = await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'twilio' });
    const conversationId = (await s.store.findConversationByParticipant(created.body.result.id))!.id;
    await waitFor(async () => (await s.store.listOutbox(conversationId))[0]?.status === 'failed', {
      what: 'greeting failed',
    });
    expect((await s.store.listOutbox(conversationId))[0]).toMatchObject({
      attempts: 1,
      lastError: expect.stringContaining('21610'),
    });
    // Remembered as an opt-out: nothing more is tried until they send START.
    expect(await s.store.getContact('twilio', PHONE)).toMatchObject({ optedOutAt: expect.any(Date) });
    const participant = (await s.request('GET', `/conversation/participants/${created.body.result.id}`)).body.result;
    expect(participant.status).toBe('paused');
    // What they write is kept, and not answered while they are paused.
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'hello?'));
    await s.engine.idle();
    expect(await userTexts(s, created.body.result.id)).toEqual(['hello?']);
    expect(await s.store.listOutbox(conversationId)).toHaveLength(1);
    expect(api.attempts).toHaveLength(1);

    // START undoes it: the participant is active again and hears from the program.
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'START'));
    await waitFor(
      async () =>
        (await s.request('GET', `/conversation/participants/${created.body.result.id}`)).body.result.status ===
        'active',
      { what: 'resumed' },
    );
    expect(await s.store.getContact('twilio', PHONE)).toMatchObject({ optedOutAt: null });
  });

  it("retries when the sender's queue is full (21611, answered 400)", async () => {
    api.failures = [{ status: 400, code: 21611 }];
    const s = await start();
    await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'twilio' });
    await waitFor(() => api.attempts.length > 0, { what: 'first attempt' });
    await s.request('POST', '/admin/clock', { advance: '1s' });
    await api.waitForSent(1);
    expect(api.attempts.map((attempt) => attempt.status)).toEqual([400, 201]);
  });
});
