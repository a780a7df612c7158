import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { FakeTwilioApi } from '../kit/fake-twilio-api.ts';
import { postTwilio, smsForm, startTwilio, twilioEnv } from '../kit/provider-kit.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// The overview's `opted_out` flag: a participant whose channel contact said STOP (or whose
// provider reported them unsubscribed), read from the same contacts the channel gate reads.
const NOW = new Date('2026-06-01T12:00:00Z');
let api: FakeTwilioApi;
let server: TestServer;

beforeAll(async () => {
  api = await startTwilio();
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: NOW.toISOString(), ...twilioEnv(api) },
    { provider: createScriptedProvider(() => ({ text: 'Hello!' })) },
  );
});
afterAll(async () => {
  await server.close();
  await api.close();
});

async function enrol(phone: string, name: string, channel?: string): Promise<string> {
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: phone,
    name,
    ...(channel ? { channel } : {}),
  });
  expect(created.status).toBe(201);
  return created.body.result.id;
}
async function flagsByName(): Promise<Record<string, string[]>> {
  const { status, body } = await server.request('GET', '/study/overview');
  expect(status).toBe(200);
  return Object.fromEntries(body.result.participants.map((p: { name: string; flags: string[] }) => [p.name, p.flags]));
}

describe('the opted_out flag', () => {
  it('follows an SMS STOP and START, and opt-outs a provider reported, never someone else’s', async () => {
    const texter = await enrol('+14165550171', 'Texter', 'twilio');
    await enrol('+14165550172', 'Unsubscribed');
    const linked = await enrol('+14165550173', 'Linked');
    await enrol('+14165550174', 'Writes');
    await server.engine.idle();
    expect(await flagsByName()).toEqual({ Texter: [], Unsubscribed: [], Linked: [], Writes: [] });

    // STOP over SMS: the opt-out is recorded and they are paused.
    await postTwilio(server, '/webhooks/twilio', smsForm('+14165550171', 'STOP'));
    await waitFor(
      async () => (await server.request('GET', `/conversation/participants/${texter}`)).body.result.status === 'paused',
      { what: 'paused by STOP' },
    );
    // WhatsApp said the number unsubscribed before they ever wrote: a contact keyed by its digits only.
    await server.store.setContactOptOut('whatsapp', '14165550172', NOW, NOW);
    // A contact linked to them whose id is not their number (a WhatsApp user id), opted out.
    await server.store.recordContactInbound(
      { channel: 'whatsapp', contactId: 'US.13491208655302741918', participantId: linked, phoneNumber: null },
      NOW,
    );
    await server.store.setContactOptOut('whatsapp', 'US.13491208655302741918', NOW, NOW);
    // Someone who writes but never opted out, and an opt-out of a number nobody in the study has.
    await server.store.recordContactInbound(
      { channel: 'twilio', contactId: '+14165550174', participantId: null, phoneNumber: '+14165550174' },
      NOW,
    );
    await server.store.setContactOptOut('twilio', '+14165550999', NOW, NOW);

    expect(await flagsByName()).toEqual({
      Texter: ['opted_out', 'paused'],
      Unsubscribed: ['opted_out'],
      Linked: ['opted_out'],
      Writes: [],
    });
    const { body } = await server.request('GET', '/study/overview');
    expect(body.result.totals.flagged).toMatchObject({ opted_out: 3, paused: 1 });

    // START opts back in: the flag goes with it.
    await postTwilio(server, '/webhooks/twilio', smsForm('+14165550171', 'START'));
    await waitFor(
      async () => (await server.request('GET', `/conversation/participants/${texter}`)).body.result.status === 'active',
      { what: 'active again after START' },
    );
    expect((await flagsByName()).Texter).toEqual([]);
  });
});
