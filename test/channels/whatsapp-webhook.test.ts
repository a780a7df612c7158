import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UNKNOWN_SENDER_REPLY, UNSUPPORTED_CONTENT_REPLY } from '../../src/engine/inbound-message.ts';
import { GOODBYE_TEXT } from '../../src/engine/participant-service.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { FakeWhatsAppGraph } from '../kit/fake-whatsapp-graph.ts';
import {
  fixture,
  postWhatsApp,
  startGraph,
  WA,
  whatsappEnv,
  whatsappMessage,
  whatsappStatus,
  whatsappText,
} from '../kit/provider-kit.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// The WhatsApp Cloud API channel over real sockets: Meta's webhooks signed as Meta signs them, and
// a fake Graph API for our sends (WIRE-FORMATS §2, issue #7).
const NOW = '2026-05-28T20:30:00Z';
const PHONE = '+16505551234';
const WA_ID = '16505551234';

let graph: FakeWhatsAppGraph;
let server: TestServer | undefined;
const provider = createScriptedProvider((request) => ({ text: `You said: ${request.messages.at(-1)?.content}` }));

beforeAll(async () => {
  graph = await startGraph();
});
afterAll(() => graph.close());
afterEach(async () => {
  await server?.close();
  server = undefined;
  graph.sent.length = 0;
  graph.attempts.length = 0;
  graph.failures = [];
});

async function start(env: Record<string, string> = {}) {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: NOW, ...whatsappEnv(graph), ...env }, { provider });
  return server;
}

/** Enrolls +16505551234 on WhatsApp; the greeting goes out as the template (they never wrote). */
async function enrolled(env: Record<string, string> = {}) {
  const s = await start(env);
  const created = await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'whatsapp' });
  expect(created.status).toBe(201);
  await graph.waitForSent(1);
  return { s, participantId: created.body.result.id as string };
}

const messagesOf = async (s: TestServer, participantId: string) =>
  (await s.request('GET', `/conversation/participants/${participantId}/history`)).body.result.messages;
/** The conversation's outbox once nothing is pending (the fake answered before we recorded it). */
async function settledOutbox(s: TestServer, participantId: string) {
  const conversationId = (await s.store.findConversationByParticipant(participantId))!.id;
  await waitFor(async () => (await s.store.listOutbox(conversationId)).every((item) => item.status !== 'pending'), {
    what: 'outbox settled',
  });
  return s.store.listOutbox(conversationId);
}

describe('verification handshake', () => {
  it('echoes hub.challenge as plain text for the right token, and refuses anything else', async () => {
    const s = await start();
    const ok = await fetch(
      `${s.url}/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${WA.verifyToken}&hub.challenge=1158201444`,
    );
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await ok.text()).toBe('1158201444');
    for (const query of [
      `hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1`,
      `hub.mode=unsubscribe&hub.verify_token=${WA.verifyToken}&hub.challenge=1`,
      'hub.challenge=1',
    ]) {
      const refused = await s.request('GET', `/webhooks/whatsapp?${query}`);
      expect(refused.status, query).toBe(403);
      expect(refused.body).toMatchObject({ code: 'forbidden', field: 'hub.verify_token' });
    }
  });

  it('is public even when API_TOKEN is set (Meta signs instead)', async () => {
    const s = await start({ API_TOKEN: 'a'.repeat(20) });
    expect(
      (
        await s.request(
          'GET',
          `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${WA.verifyToken}&hub.challenge=7`,
        )
      ).status,
    ).toBe(200);
    expect((await postWhatsApp(s, whatsappText('hi'))).status).toBe(200);
    expect((await s.request('GET', '/conversation/participants')).status).toBe(401);
  });
});

describe('signatures', () => {
  it(
    'accepts a correctly signed webhook and refuses tampered, wrongly signed and unsigned ones without ' +
      'storing anything',
    async () => {
      const { s, participantId } = await enrolled();
      const raw = JSON.stringify(whatsappText('hello'));
      const { whatsappSignature } = await import('../kit/provider-signatures.ts');
      const good = whatsappSignature(WA.appSecret, raw);
      const refused = [
        await postWhatsApp(s, raw.replace('hello', 'HELLO'), good), // tampered body
        await postWhatsApp(s, raw, whatsappSignature('another-secret', raw)),
        await postWhatsApp(s, raw, null),
        await postWhatsApp(s, raw, 'sha256=zz'),
        await postWhatsApp(s, raw, good.replace('sha256=', 'sha1=')),
      ];
      for (const response of refused)
        expect(response.body).toMatchObject({ code: 'invalid_signature', field: 'x-hub-signature-256' });
      expect(refused.map((response) => response.status)).toEqual([401, 401, 401, 401, 401]);
      await s.engine.idle();
      expect((await messagesOf(s, participantId)).filter((m: any) => m.role === 'user')).toEqual([]);

      expect((await postWhatsApp(s, raw, good)).status).toBe(200);
      await waitFor(
        async () => (await messagesOf(s, participantId)).some((m: any) => m.role === 'user' && m.text === 'hello'),
        { what: 'stored message' },
      );
    },
  );

  it('takes a batch larger than MAX_BODY_BYTES (Meta sends up to 3 MB)', async () => {
    const s = await start({ MAX_BODY_BYTES: '65536' });
    const batch = whatsappText('hi');
    batch.entry[0].changes[0].value.padding = 'x'.repeat(200_000);
    expect((await postWhatsApp(s, batch)).status).toBe(200);
    expect(
      (await s.request('POST', '/conversation/participants', { phone_number: PHONE, notes: 'x'.repeat(70_000) }))
        .status,
    ).toBe(413);
  });

  it('answers 400 for signed bytes that are not JSON or not a webhook envelope', async () => {
    const s = await start();
    expect((await postWhatsApp(s, '{"object":')).body).toMatchObject({ code: 'invalid_json', field: 'body' });
    expect((await postWhatsApp(s, { object: 'whatsapp_business_account', entry: 'nope' })).body).toMatchObject({
      code: 'invalid_request',
      field: 'entry',
    });
  });
});

describe('inbound messages', () => {
  it('a text becomes a turn; the reply goes out as free-form text inside the 24-hour window', async () => {
    const { s } = await enrolled();
    expect(graph.sent[0]!.body).toMatchObject({
      to: WA_ID,
      type: 'template',
      template: { name: 'daily_checkin', language: { code: 'en_US' } },
    });
    const response = await postWhatsApp(s, fixture('whatsapp', 'text'));
    expect(response).toMatchObject({ status: 200, body: { status: 'ok', messages: 1, statuses: 0 } });
    await graph.waitForSent(2);
    expect(graph.sent[1]).toEqual({
      phoneNumberId: WA.phoneNumberId,
      body: {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: WA_ID,
        type: 'text',
        text: { body: 'You said: I walked 20 minutes today', preview_url: false },
      },
    });
  });

  it.each(['image', 'audio', 'location', 'sticker', 'reaction', 'unsupported'])(
    'a %s message is answered politely, without a model turn',
    async (type) => {
      const { s, participantId } = await enrolled();
      const calls = provider.requests.length;
      expect((await postWhatsApp(s, fixture('whatsapp', type))).status).toBe(200);
      await graph.waitForSent(2);
      expect(graph.sent[1]!.body).toMatchObject({ type: 'text', text: { body: UNSUPPORTED_CONTENT_REPLY } });
      expect(provider.requests.length).toBe(calls);
      const messages = await messagesOf(s, participantId);
      expect(messages.at(-1)).toMatchObject({ role: 'system', text: UNSUPPORTED_CONTENT_REPLY });
    },
  );

  it('a system message (number changed) is not something the person said: nothing happens', async () => {
    const { s } = await enrolled();
    expect((await postWhatsApp(s, fixture('whatsapp', 'system-changed-number'))).body).toMatchObject({ messages: 0 });
    await s.engine.idle();
    expect(graph.sent).toHaveLength(1);
  });

  it('a batched webhook: every message of every entry, and the status', async () => {
    const { s } = await enrolled();
    const response = await postWhatsApp(s, fixture('whatsapp', 'batched'));
    expect(response.body).toMatchObject({ status: 'ok', statuses: 1 });
    expect(response.body.messages).toBeGreaterThanOrEqual(2);
  });

  it('a message to another phone number of the business account is left alone', async () => {
    const s = await start();
    const payload = whatsappText('for the other number');
    payload.entry[0].changes[0].value.metadata.phone_number_id = '999999999';
    expect((await postWhatsApp(s, payload)).body).toMatchObject({ messages: 0 });
  });

  it(
    'someone not enrolled gets the polite not-enrolled answer on WhatsApp, once a day (UTC) however much they ' +
      'write',
    async () => {
      const s = await start();
      await postWhatsApp(s, whatsappText('who is this?', { waId: '14165550123' }));
      await graph.waitForSent(1);
      expect(graph.sent[0]!.body).toMatchObject({
        to: '14165550123',
        type: 'text',
        text: { body: UNKNOWN_SENDER_REPLY },
      });

      for (const text of ['hello?', 'anyone?', 'HELLO'])
        await postWhatsApp(s, whatsappText(text, { waId: '14165550123' }));
      await postWhatsApp(s, whatsappText('me too', { waId: '14165550124' }));
      await graph.waitForSent(2);
      // Once per UTC day: the clock starts at 20:30.
      await s.request('POST', '/admin/clock', { advance: '3h' });
      await postWhatsApp(s, whatsappText('still there?', { waId: '14165550123' }));
      await s.request('POST', '/admin/clock', { advance: '1h' });
      await postWhatsApp(s, whatsappText('the next day', { waId: '14165550123' }));
      await graph.waitForSent(3);
      await s.settle(); // nothing more is on its way
      expect(graph.sent.map((sent) => sent.body.to)).toEqual(['14165550123', '14165550124', '14165550123']);
    },
  );

  it(
    'keys the contact by the business-scoped user id, so a later message without the phone number still ' +
      'reaches the participant',
    async () => {
      const { s, participantId } = await enrolled();
      await postWhatsApp(s, whatsappText('first, with my number', { userId: 'US.13491208655302741918' }));
      await graph.waitForSent(2);
      const withheld = whatsappText('second, number withheld', { userId: 'US.13491208655302741918' });
      const value = withheld.entry[0].changes[0].value;
      delete value.contacts[0].wa_id;
      delete value.messages[0].from;
      await postWhatsApp(s, withheld);
      await graph.waitForSent(3);
      expect(graph.sent[2]!.body).toMatchObject({ to: WA_ID, text: { body: 'You said: second, number withheld' } });
      expect(
        (await messagesOf(s, participantId)).filter((m: any) => m.role === 'user').map((m: any) => m.text),
      ).toEqual(['first, with my number', 'second, number withheld']);
    },
  );
});

describe('duplicates', () => {
  it('one message delivered 5 times at once and again after a restart: one turn, one reply', async () => {
    const database = tempSqliteUrl();
    const { s, participantId } = await enrolled({ DATABASE_URL: database });
    const payload = whatsappText('count me once');
    const answers = await Promise.all(Array.from({ length: 5 }, () => postWhatsApp(s, payload)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    await graph.waitForSent(2);
    await s.engine.idle();
    await s.close();

    server = await start({ DATABASE_URL: database });
    expect((await postWhatsApp(server, payload)).status).toBe(200);
    await server.settle();
    expect(graph.texts().filter((text) => text === 'You said: count me once')).toHaveLength(1);
    const messages = await messagesOf(server, participantId);
    expect(messages.filter((m: any) => m.text === 'count me once')).toHaveLength(1);
  });
});

describe('delivery statuses', () => {
  it('out-of-order and repeated statuses settle on the furthest one; failures keep their reason', async () => {
    const { s, participantId } = await enrolled();
    const [greeting] = await settledOutbox(s, participantId);
    const wamidOut = greeting!.providerMessageId!;
    expect(wamidOut).toMatch(/^wamid\./);
    const at = new Date(NOW);
    for (const status of ['read', 'sent', 'delivered', 'read']) {
      expect((await postWhatsApp(s, whatsappStatus(wamidOut, status, at))).body).toMatchObject({ statuses: 1 });
    }
    expect(await s.store.getOutbox(greeting!.id)).toMatchObject({ deliveryStatus: 'read' });

    await postWhatsApp(s, whatsappText('hi'));
    await graph.waitForSent(2);
    const reply = (await settledOutbox(s, participantId)).at(-1)!;
    await postWhatsApp(
      s,
      whatsappStatus(reply.providerMessageId!, 'failed', at, [{ code: 131026, title: 'Message undeliverable' }]),
    );
    expect(await s.store.getOutbox(reply.id)).toMatchObject({
      deliveryStatus: 'failed',
      deliveryError: '131026 Message undeliverable',
    });
  });
});

describe('the 24-hour window', () => {
  it(
    'free-form inside the window, the template after it closes, and the template again when Meta says the ' +
      'window closed (131047)',
    async () => {
      const { s } = await enrolled();
      await postWhatsApp(s, whatsappText('hi', { at: new Date(NOW) }));
      await graph.waitForSent(2);
      expect(graph.sent[1]!.body.type).toBe('text');

      await s.request('POST', '/admin/clock', { advance: '24h' });
      // An image sent before "hi" arrives only now (Meta retried for a day): it does not reopen the
      // window, which still counts from "hi", 24 h ago. Its polite answer must be the template.
      await postWhatsApp(
        s,
        whatsappMessage(
          { type: 'image', image: { id: '1', mime_type: 'image/jpeg' } },
          { at: new Date(Date.parse(NOW) - 3_600_000) },
        ),
      );
      await graph.waitForSent(3);
      expect(graph.sent[2]!.body).toMatchObject({
        type: 'template',
        template: { components: [{ type: 'body', parameters: [{ type: 'text', text: UNSUPPORTED_CONTENT_REPLY }] }] },
      });

      await postWhatsApp(s, whatsappText('back again'));
      graph.failures = [{ status: 400, code: 131047 }];
      await graph.waitForSent(4);
      expect(graph.attempts.at(-2)).toMatchObject({ status: 400, body: { type: 'text' } });
      expect(graph.sent[3]!.body).toMatchObject({
        type: 'template',
        template: { components: [{ parameters: [{ text: 'You said: back again' }] }] },
      });
    },
  );

  it(
    'when Meta accepts a free-form reply and later reports 131047 in a failed status, the reply goes out ' +
      'again as the template, once',
    async () => {
      const { s, participantId } = await enrolled();
      await postWhatsApp(s, whatsappText('are you there?', { at: new Date(NOW) }));
      await graph.waitForSent(2);
      const reply = (await settledOutbox(s, participantId)).at(-1)!;
      expect(graph.sent[1]!.body.type).toBe('text');
      const failed = whatsappStatus(reply.providerMessageId!, 'failed', new Date(NOW), [
        { code: 131047, title: 'Re-engagement message' },
      ]);
      for (let i = 0; i < 3; i++) await postWhatsApp(s, failed); // Meta retries its webhooks too
      await graph.waitForSent(3);
      expect(graph.sent[2]!.body).toMatchObject({
        type: 'template',
        template: { components: [{ parameters: [{ text: 'You said: are you there?' }] }] },
      });
      const outbox = await settledOutbox(s, participantId);
      expect(outbox.map((item) => item.idempotencyKey)).toEqual([
        expect.any(String),
        reply.idempotencyKey,
        `${reply.idempotencyKey}#template`,
      ]);
      expect(graph.sent).toHaveLength(3);
    },
  );

  it('a goodbye inside the window goes as free-form text, decided on their contact before it was deleted', async () => {
    const { s, participantId } = await enrolled();
    await postWhatsApp(s, whatsappText('hi', { at: new Date(NOW) }));
    await graph.waitForSent(2);
    expect(await s.store.getContact('whatsapp', WA_ID)).toBeDefined();
    expect((await s.request('DELETE', `/conversation/participants/${participantId}`)).status).toBe(200);
    expect(graph.sent[2]!.body).toMatchObject({ to: WA_ID, type: 'text', text: { body: GOODBYE_TEXT } });
    expect(await s.store.getContact('whatsapp', WA_ID)).toBeUndefined();
  });

  it('no template configured: a send outside the window fails with a clear reason and is not retried', async () => {
    const { s, participantId } = await enrolledWithoutTemplate();
    const conversationId = (await s.store.findConversationByParticipant(participantId))!.id;
    await waitFor(async () => (await s.store.listOutbox(conversationId))[0]?.status === 'failed', {
      what: 'greeting marked failed',
    });
    const [greeting] = await s.store.listOutbox(conversationId);
    expect(greeting).toMatchObject({
      attempts: 1,
      lastError: expect.stringContaining('WHATSAPP_TEMPLATE_NAME is not set'),
    });
    expect(graph.attempts).toHaveLength(0);
  });
});

async function enrolledWithoutTemplate() {
  const s = await start({ WHATSAPP_TEMPLATE_NAME: '' });
  const created = await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'whatsapp' });
  return { s, participantId: created.body.result.id as string };
}

describe('numbers WhatsApp writes in a legacy form', () => {
  it("a Mexican mobile's wa_id (old 1 after 52) reaches the participant enrolled with the current number", async () => {
    const s = await start();
    const created = await s.request('POST', '/conversation/participants', {
      phone_number: '+525512345678',
      channel: 'whatsapp',
    });
    await graph.waitForSent(1);
    await postWhatsApp(s, whatsappText('hola', { waId: '5215512345678', at: new Date(NOW) }));
    await graph.waitForSent(2);
    expect(graph.sent[1]!.body).toMatchObject({ to: '525512345678', type: 'text', text: { body: 'You said: hola' } });
    expect(await messagesOf(s, created.body.result.id)).toEqual(
      expect.arrayContaining([expect.objectContaining({ role: 'user', text: 'hola' })]),
    );
  });
});

describe('outbound failures', () => {
  it('an expired access token (401, code 190) keeps the message for a retry instead of failing it', async () => {
    graph.failures = [{ status: 401, code: 190 }];
    const s = await start();
    await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'whatsapp' });
    await waitFor(() => graph.attempts.length > 0, { what: 'first attempt' });
    await s.request('POST', '/admin/clock', { advance: '1s' });
    await graph.waitForSent(1);
    expect(graph.attempts.map((attempt) => attempt.status)).toEqual([401, 200]);
  });

  it('retries rate limits and server errors, gives up at once on a permanent refusal', async () => {
    graph.failures = [
      { status: 429, code: 130429 },
      { status: 500, code: 1 },
    ];
    const s = await start();
    const created = await s.request('POST', '/conversation/participants', { phone_number: PHONE, channel: 'whatsapp' });
    const participantId = created.body.result.id as string;
    for (const step of ['1s', '2s']) {
      await waitFor(() => graph.attempts.length > 0, { what: 'first attempt' });
      await s.request('POST', '/admin/clock', { advance: step }); // the retry backoff runs on the virtual clock
    }
    await graph.waitForSent(1);
    expect(graph.attempts.map((attempt) => attempt.status)).toEqual([429, 500, 200]);
    graph.failures = [{ status: 400, code: 131026 }];
    await postWhatsApp(s, whatsappText('hi'));
    const conversationId = (await s.store.findConversationByParticipant(participantId))!.id;
    await waitFor(async () => (await s.store.listOutbox(conversationId)).at(-1)?.status === 'failed', {
      what: 'reply failed',
    });
    expect((await s.store.listOutbox(conversationId)).at(-1)).toMatchObject({
      attempts: 1,
      lastError: expect.stringContaining('code 131026'),
    });
  });
});
