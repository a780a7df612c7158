import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTwilioApi, segmentCount } from './fake-twilio-api.ts';
import { FakeWhatsAppGraph } from './fake-whatsapp-graph.ts';
import { TWILIO_DOCS_EXAMPLE, twilioSignature, whatsappSignature } from './provider-signatures.ts';

const TOKEN = 'EAAG-test-token';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
const AUTH_TOKEN = 'twilio-auth-token';
const PHONE_NUMBER_ID = '106540352242922';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

async function graph(): Promise<FakeWhatsAppGraph> {
  const fake = await new FakeWhatsAppGraph({ accessToken: TOKEN }).start();
  open.push(fake);
  return fake;
}

async function twilio(): Promise<FakeTwilioApi> {
  const fake = await new FakeTwilioApi({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN }).start();
  open.push(fake);
  return fake;
}

function sendWhatsApp(fake: FakeWhatsAppGraph, body: unknown, token = TOKEN): Promise<Response> {
  return fetch(`${fake.baseUrl}/${PHONE_NUMBER_ID}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const text = (to: string, body: string) => ({
  messaging_product: 'whatsapp',
  recipient_type: 'individual',
  to,
  type: 'text',
  text: { body },
});

function sendTwilio(
  fake: FakeTwilioApi,
  params: Record<string, string>,
  credentials = `${ACCOUNT_SID}:${AUTH_TOKEN}`,
  accountSid = ACCOUNT_SID,
): Promise<Response> {
  return fetch(`${fake.baseUrl}/2010-04-01/Accounts/${accountSid}/Messages.json`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
    body: new URLSearchParams(params),
  });
}

describe('FakeWhatsAppGraph', () => {
  it('accepts a bearer-authorized send, records it and answers like Cloud API', async () => {
    const fake = await graph();
    expect(fake.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v23\.0$/);
    const first = await sendWhatsApp(fake, text('16505551234', 'Time for a walk!'));
    const second = await sendWhatsApp(fake, {
      messaging_product: 'whatsapp',
      to: '+14165550199',
      type: 'interactive',
      interactive: { type: 'button' },
    });
    expect(first.status).toBe(200);
    const answer: any = await first.json();
    expect(answer).toEqual({
      messaging_product: 'whatsapp',
      contacts: [{ input: '16505551234', wa_id: '16505551234' }],
      messages: [{ id: expect.stringMatching(/^wamid\.\S+$/) }],
    });
    const other: any = await second.json();
    expect(other.messages[0].id).not.toBe(answer.messages[0].id);
    expect(fake.sent).toHaveLength(2);
    expect(fake.sent[0]).toEqual({ phoneNumberId: PHONE_NUMBER_ID, body: text('16505551234', 'Time for a walk!') });
    expect(fake.texts()).toEqual(['Time for a walk!']);
    expect(fake.to('14165550199')).toHaveLength(1);
  });

  it('rejects a wrong or missing token with a Graph OAuthException and records nothing', async () => {
    const fake = await graph();
    fake.failures.push({ status: 500, code: 1 });
    const wrong = await sendWhatsApp(fake, text('16505551234', 'hi'), 'not-the-token');
    const missing = await fetch(`${fake.baseUrl}/${PHONE_NUMBER_ID}/messages`, {
      method: 'POST',
      body: JSON.stringify(text('16505551234', 'hi')),
    });
    expect(wrong.status).toBe(401);
    expect(missing.status).toBe(401);
    const body: any = await wrong.json();
    expect(body.error).toMatchObject({ type: 'OAuthException', code: 190, fbtrace_id: expect.any(String) });
    expect(body.error.message).toEqual(expect.any(String));
    expect(fake.sent).toEqual([]);
    expect(fake.attempts.map((attempt) => attempt.status)).toEqual([401, 401]);
    expect(fake.failures).toHaveLength(1); // unauthorized requests do not consume scripted failures
  });

  it('fails the next sends from the failure queue, then accepts again', async () => {
    const fake = await graph();
    fake.failures.push(
      { status: 400, code: 131047 },
      { status: 429, code: 130429 },
      { status: 500, code: 1, message: 'boom' },
    );
    const statuses: number[] = [];
    const errors: any[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const response = await sendWhatsApp(fake, text('16505551234', `try ${attempt}`));
      statuses.push(response.status);
      errors.push(((await response.json()) as any).error);
    }
    expect(statuses).toEqual([400, 429, 500, 200]);
    expect(errors[0]).toMatchObject({
      code: 131047,
      type: 'OAuthException',
      error_data: { messaging_product: 'whatsapp' },
    });
    expect(errors[0].message).toContain('Re-engagement message');
    expect(errors[1]).toMatchObject({ code: 130429 });
    expect(errors[2].message).toContain('boom');
    expect(errors[3]).toBeUndefined();
    expect(fake.texts()).toEqual(['try 3']);
  });

  it('answers 400 code 100 to a body without messaging_product or recipient', async () => {
    const fake = await graph();
    const response = await sendWhatsApp(fake, { to: '16505551234', type: 'text', text: { body: 'x' } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.code).toBe(100);
    expect(fake.sent).toEqual([]);
  });

  it('waitForSent resolves on arrival and rejects after its timeout', async () => {
    const fake = await graph();
    const waiting = fake.waitForSent(1);
    await sendWhatsApp(fake, text('16505551234', 'hello'));
    await expect(waiting).resolves.toBeUndefined();
    await expect(fake.waitForSent(2, 50)).rejects.toThrow('expected 2 WhatsApp sends, got 1');
  });
});

describe('FakeTwilioApi', () => {
  it('accepts a Basic-authenticated form post and answers 201 with a Message resource', async () => {
    const fake = await twilio();
    expect(fake.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await sendTwilio(fake, { To: '+14165550199', From: '+15005550006', Body: 'Time for a walk!' });
    expect(response.status).toBe(201);
    const message: any = await response.json();
    expect(message).toMatchObject({
      account_sid: ACCOUNT_SID,
      sid: expect.stringMatching(/^SM[0-9a-f]{32}$/),
      status: 'queued',
      to: '+14165550199',
      from: '+15005550006',
      body: 'Time for a walk!',
      num_segments: '1',
      num_media: '0',
      direction: 'outbound-api',
      error_code: null,
      error_message: null,
      date_created: expect.stringMatching(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/),
    });
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]).toMatchObject({
      accountSid: ACCOUNT_SID,
      params: { To: '+14165550199', From: '+15005550006', Body: 'Time for a walk!' },
    });
    expect(fake.bodies()).toEqual(['Time for a walk!']);
    expect(fake.to('+14165550199')).toHaveLength(1);
  });

  it('rejects wrong credentials or another account with 401 code 20003', async () => {
    const fake = await twilio();
    const wrongToken = await sendTwilio(
      fake,
      { To: '+14165550199', From: '+15005550006', Body: 'x' },
      `${ACCOUNT_SID}:nope`,
    );
    const otherAccount = await sendTwilio(
      fake,
      { To: '+14165550199', From: '+15005550006', Body: 'x' },
      undefined,
      'AC' + 'f'.repeat(32),
    );
    expect(wrongToken.status).toBe(401);
    expect(otherAccount.status).toBe(401);
    expect(wrongToken.headers.get('www-authenticate')).toContain('Basic');
    expect(await wrongToken.json()).toEqual({
      code: 20003,
      message: 'Authenticate',
      more_info: 'https://www.twilio.com/docs/errors/20003',
      status: 401,
    });
    expect(fake.sent).toEqual([]);
  });

  it('fails the next sends from the failure queue with Twilio error bodies', async () => {
    const fake = await twilio();
    fake.failures.push({ status: 400, code: 21610 }, { status: 429, code: 20429 }, { status: 500, code: 20500 });
    const answers: Array<{ status: number; body: any }> = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const response = await sendTwilio(fake, { To: '+14165550199', From: '+15005550006', Body: `try ${attempt}` });
      answers.push({ status: response.status, body: await response.json() });
    }
    expect(answers.map((answer) => answer.status)).toEqual([400, 429, 500, 201]);
    expect(answers[0]?.body).toEqual({
      code: 21610,
      message: 'Attempt to send to unsubscribed recipient',
      more_info: 'https://www.twilio.com/docs/errors/21610',
      status: 400,
    });
    expect(answers[1]?.body).toMatchObject({ code: 20429, status: 429 });
    expect(fake.bodies()).toEqual(['try 3']);
    expect(fake.attempts).toHaveLength(4);
  });

  it('validates required fields and reflects a Messaging Service send', async () => {
    const fake = await twilio();
    const noTo = await sendTwilio(fake, { From: '+15005550006', Body: 'x' });
    expect(noTo.status).toBe(400);
    expect(((await noTo.json()) as any).code).toBe(21604);
    const viaService = await sendTwilio(fake, {
      To: '+14165550199',
      MessagingServiceSid: 'MG' + '0'.repeat(32),
      Body: 'x',
    });
    expect(await viaService.json()).toMatchObject({ status: 'accepted', from: null, num_segments: '0' });
  });

  it('counts SMS segments for GSM-7 and UCS-2 bodies', () => {
    expect(segmentCount('a'.repeat(160))).toBe(1);
    expect(segmentCount('a'.repeat(161))).toBe(2);
    expect(segmentCount('{'.repeat(80))).toBe(1);
    expect(segmentCount('é'.repeat(70) + 'ı')).toBe(2);
    expect(segmentCount('ı'.repeat(70))).toBe(1);
  });
});

describe('provider signatures', () => {
  it("reproduces Twilio's documentation example", () => {
    const { authToken, url, params, signature } = TWILIO_DOCS_EXAMPLE;
    expect(twilioSignature(authToken, url, params)).toBe(signature);
  });

  it('signs Twilio params independent of their order, but bound to the exact URL', () => {
    const { authToken, url, params } = TWILIO_DOCS_EXAMPLE;
    const reversed = Object.fromEntries(Object.entries(params).reverse());
    expect(twilioSignature(authToken, url, reversed)).toBe(TWILIO_DOCS_EXAMPLE.signature);
    expect(twilioSignature(authToken, url.replace('https:', 'http:'), params)).not.toBe(TWILIO_DOCS_EXAMPLE.signature);
  });

  it('signs WhatsApp bodies as sha256=<hex HMAC-SHA256> of the raw bytes', () => {
    // RFC 4231 test case 2 (key "Jefe").
    expect(whatsappSignature('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
    const raw = readFileSync(new URL('../fixtures/whatsapp/text.json', import.meta.url));
    expect(whatsappSignature('secret', raw)).toBe(whatsappSignature('secret', raw.toString('utf8')));
    expect(whatsappSignature('secret', JSON.stringify(JSON.parse(raw.toString('utf8'))))).not.toBe(
      whatsappSignature('secret', raw),
    );
  });
});

describe('provider fixtures', () => {
  const whatsappDir = new URL('../fixtures/whatsapp/', import.meta.url);
  const twilioDir = new URL('../fixtures/twilio/', import.meta.url);
  const read = (dir: URL, name: string): any => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));

  it('WhatsApp payloads share the envelope and use distinct wamids', () => {
    const ids: string[] = [];
    for (const name of readdirSync(whatsappDir)) {
      const payload = read(whatsappDir, name);
      expect(payload.object, name).toBe('whatsapp_business_account');
      for (const entry of payload.entry) {
        for (const change of entry.changes) {
          expect(change.field, name).toBe('messages');
          expect(change.value.metadata.phone_number_id, name).toBe(PHONE_NUMBER_ID);
          for (const item of [...(change.value.messages ?? []), ...(change.value.statuses ?? [])]) {
            expect(item.id, name).toMatch(/^wamid\./);
            expect(item.timestamp, name).toMatch(/^17800\d{5}$/);
            ids.push(item.id);
          }
        }
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(read(whatsappDir, 'system-changed-number.json').entry[0].changes[0].value.contacts).toBeUndefined();
  });

  it('Twilio payloads are flat string maps', () => {
    for (const name of readdirSync(twilioDir)) {
      const params = read(twilioDir, name);
      expect(
        Object.values(params).every((value) => typeof value === 'string'),
        name,
      ).toBe(true);
      expect(params.MessageSid, name).toMatch(/^(SM|MM)[0-9a-f]{32}$/);
      expect(params.AccountSid, name).toMatch(/^AC[0-9a-f]{32}$/);
    }
  });
});
