import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SMS_HELP_TEXT } from '../../src/http/twilio-routes.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { FakeTwilioApi } from '../kit/fake-twilio-api.ts';
import type { FakeWhatsAppGraph } from '../kit/fake-whatsapp-graph.ts';
import {
  postTwilio,
  postWhatsApp,
  smsForm,
  startGraph,
  startTwilio,
  twilioEnv,
  whatsappEnv,
  whatsappStatus,
  whatsappText,
} from '../kit/provider-kit.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// Found in review of the channels work: each case once went wrong.
const PHONE = '+16505551234';
let graph: FakeWhatsAppGraph;
let twilio: FakeTwilioApi;
let server: TestServer | undefined;
const provider = createScriptedProvider((request) => ({
  text: String(request.messages.at(-1)?.content).startsWith('long')
    ? 'word '.repeat(700).trim()
    : `You said: ${request.messages.at(-1)?.content}`,
}));

beforeAll(async () => {
  [graph, twilio] = await Promise.all([startGraph(), startTwilio()]);
});
afterAll(async () => {
  await Promise.all([graph.close(), twilio.close()]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  graph.sent.length = 0;
  twilio.sent.length = 0;
});

async function start() {
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: '2026-05-28T20:30:00Z', ...whatsappEnv(graph), ...twilioEnv(twilio) },
    { provider },
  );
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: PHONE,
    channel: 'whatsapp',
  });
  await graph.waitForSent(1);
  const participantId = created.body.result.id as string;
  const channel = async () =>
    (await server!.request('GET', `/conversation/participants/${participantId}/state`)).body.result.channel;
  return { s: server, participantId, channel };
}

describe('channel edge cases', () => {
  it('a late redelivery of an old WhatsApp message does not move replies back from SMS', async () => {
    const { s, channel } = await start();
    const old = whatsappText('on whatsapp');
    await postWhatsApp(s, old);
    await graph.waitForSent(2);
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'now by sms'));
    await twilio.waitForSent(1);
    expect(await channel()).toBe('twilio');
    await postWhatsApp(s, old); // Meta retries the old one
    await s.engine.idle();
    expect(await channel()).toBe('twilio');
  });

  it('HELP by SMS is answered by SMS even when the conversation is on WhatsApp', async () => {
    const { s, channel } = await start();
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'HELP'));
    await twilio.waitForSent(1);
    expect(twilio.sent[0]!.params.Body).toBe(SMS_HELP_TEXT);
    expect(graph.sent).toHaveLength(1); // only the greeting
    expect(await channel()).toBe('twilio');
  });

  it('a STOP whose handling failed is handled in full when the provider retries it', async () => {
    const { s, participantId } = await start();
    const message = { channel: 'twilio', sender: PHONE, contactId: PHONE, text: 'STOP', channelMessageId: 'SMretry' };
    await expect(
      s.inbound.receiveCommand(message, null, async () => {
        throw new Error('database went away');
      }),
    ).rejects.toThrow('database went away');
    let applied = 0;
    const retried = await s.inbound.receiveCommand(message, null, async () => void (applied += 1));
    expect(retried.duplicate).toBe(false);
    expect(applied).toBe(1);
    // And over HTTP: the real STOP handling, retried, pauses once.
    await postTwilio(s, '/webhooks/twilio', smsForm(PHONE, 'STOP', { MessageSid: `SM${'a'.repeat(32)}` }));
    expect((await s.request('GET', `/conversation/participants/${participantId}`)).body.result.status).toBe('paused');
  });

  it('status names that are Object.prototype keys are ignored, not a 500', async () => {
    const { s } = await start();
    for (const status of ['constructor', 'toString', '__proto__']) {
      expect((await postWhatsApp(s, whatsappStatus('wamid.X', status, new Date()))).status).toBe(200);
      const form = { MessageSid: `SM${'b'.repeat(32)}`, MessageStatus: status, AccountSid: 'AC' };
      expect((await postTwilio(s, '/webhooks/twilio/status', form)).status).toBe(204);
    }
  });

  it('a long reply outside the window goes out as several templates, nothing clipped', async () => {
    const { s } = await start();
    await postWhatsApp(s, whatsappText('hi', { at: new Date('2026-05-28T20:30:00Z') }));
    await graph.waitForSent(2);
    await s.request('POST', '/admin/clock', { advance: '25h' });
    // Delivered a day late: the window stays closed.
    await postWhatsApp(s, whatsappText('long please', { at: new Date('2026-05-27T20:00:00Z') }));
    const templates = () =>
      graph.sent.slice(2).map((send) => send.body.template.components[0].parameters[0].text as string);
    await waitFor(() => templates().join(' ').length >= 'word '.repeat(700).trim().length, {
      what: 'every part of the long reply',
    });
    expect(templates().length).toBeGreaterThan(1);
    expect(templates().every((text) => text.length <= 1024)).toBe(true);
    expect(templates().join(' ')).toBe('word '.repeat(700).trim());
  });
});
