import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeTwilioApi } from './fake-twilio-api.ts';
import { FakeWhatsAppGraph } from './fake-whatsapp-graph.ts';
import { twilioSignature, whatsappSignature } from './provider-signatures.ts';
import type { TestServer } from './test-server.ts';

/** Test credentials: made up, only ever sent to the local fakes. */
export const WA = {
  accessToken: 'EAAG-test-token',
  phoneNumberId: '106540352242922',
  appSecret: 'test-app-secret',
  verifyToken: 'test-verify-token',
};
export const TW = {
  accountSid: `AC${'0123456789abcdef'.repeat(2)}`,
  authToken: 'test-twilio-token',
  from: '+15005550006',
};

export function whatsappEnv(graph: FakeWhatsAppGraph, extra: Record<string, string> = {}): Record<string, string> {
  return {
    WHATSAPP_ACCESS_TOKEN: WA.accessToken,
    WHATSAPP_PHONE_NUMBER_ID: WA.phoneNumberId,
    WHATSAPP_APP_SECRET: WA.appSecret,
    WHATSAPP_VERIFY_TOKEN: WA.verifyToken,
    WHATSAPP_API_BASE_URL: graph.baseUrl,
    WHATSAPP_TEMPLATE_NAME: 'daily_checkin',
    ...extra,
  };
}

export function twilioEnv(api: FakeTwilioApi, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TWILIO_ACCOUNT_SID: TW.accountSid,
    TWILIO_AUTH_TOKEN: TW.authToken,
    TWILIO_FROM: TW.from,
    TWILIO_API_BASE_URL: api.baseUrl,
    ...extra,
  };
}

export const startGraph = () => new FakeWhatsAppGraph({ accessToken: WA.accessToken }).start();
export const startTwilio = () => new FakeTwilioApi({ accountSid: TW.accountSid, authToken: TW.authToken }).start();

/** A recorded-shape payload from test/fixtures. */
export function fixture(provider: 'whatsapp' | 'twilio', name: string): any {
  return JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', provider, `${name}.json`), 'utf8'));
}

let sequence = 0;
/** A fresh wamid, so each test's messages are new to the inbox. */
export const wamid = () => `wamid.TEST${Date.now().toString(36)}${(sequence += 1)}`;

/** A WhatsApp webhook carrying one message from `waId`, shaped like the text fixture. */
export function whatsappMessage(
  message: Record<string, unknown>,
  options: { waId?: string; userId?: string; at?: Date } = {},
): any {
  const payload = fixture('whatsapp', 'text');
  const value = payload.entry[0].changes[0].value;
  const waId = options.waId ?? '16505551234';
  value.contacts = [
    { profile: { name: 'Sheena Nelson' }, wa_id: waId, ...(options.userId ? { user_id: options.userId } : {}) },
  ];
  value.messages = [
    {
      from: waId,
      ...(options.userId ? { from_user_id: options.userId } : {}),
      id: wamid(),
      timestamp: unix(options.at),
      ...message,
    },
  ];
  return payload;
}

export const whatsappText = (text: string, options: { waId?: string; userId?: string; at?: Date } = {}) =>
  whatsappMessage({ type: 'text', text: { body: text } }, options);

/** A status webhook for one of our messages. */
export function whatsappStatus(providerMessageId: string, status: string, at: Date, errors?: object[]): any {
  const payload = fixture('whatsapp', `status-${status === 'failed' ? 'failed' : 'sent'}`);
  const entry = payload.entry[0].changes[0].value.statuses[0];
  Object.assign(entry, { id: providerMessageId, status, timestamp: unix(at) }, errors ? { errors } : {});
  return payload;
}

const unix = (at: Date = new Date()) => String(Math.floor(at.getTime() / 1000));

/** POSTs a webhook as Meta does: the exact bytes, signed (or with the given signature; null = unsigned). */
export async function postWhatsApp(server: TestServer, payload: unknown, signature?: string | null) {
  const raw = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const sig = signature === undefined ? whatsappSignature(WA.appSecret, raw) : signature;
  if (sig !== null) headers['x-hub-signature-256'] = sig;
  return server.request('POST', '/webhooks/whatsapp', raw, headers);
}

/** POSTs a Twilio webhook form, signed for `url` (default: the URL the server is reached at). */
export async function postTwilio(
  server: TestServer,
  path: string,
  params: Record<string, string>,
  options: { url?: string; signature?: string | null } = {},
) {
  const signedUrl = options.url ?? `${server.url}${path}`;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const sig = options.signature === undefined ? twilioSignature(TW.authToken, signedUrl, params) : options.signature;
  if (sig !== null) headers['x-twilio-signature'] = sig;
  return server.request('POST', path, new URLSearchParams(params).toString(), headers);
}

let smsSequence = 0;
/** An inbound SMS form, shaped like the fixture, from `from` with a fresh MessageSid. */
export function smsForm(from: string, body: string, extra: Record<string, string> = {}): Record<string, string> {
  const sid = `SM${(Date.now().toString(16) + (smsSequence += 1).toString(16)).padStart(32, '0').slice(-32)}`;
  return {
    ...fixture('twilio', 'inbound-sms'),
    From: from,
    Body: body,
    MessageSid: sid,
    SmsSid: sid,
    SmsMessageSid: sid,
    AccountSid: TW.accountSid,
    ...extra,
  };
}
