import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DONE_POLL_QUESTION, INTENSITY_POLL_QUESTION } from '../../src/flows/habit-coach/polls.ts';
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
  whatsappMessage,
  whatsappText,
} from '../kit/provider-kit.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { habitModel, PROMPT_TEXT } from '../timers/habit-fixture.ts';

// Issue #7's end-to-end check: one participant goes through the habit-coaching flow on each real
// channel, against the fake provider servers, on the virtual clock. The 08:00 Toronto schedule's
// prompt goes out at 07:50 local, 11:50Z.
const START = '2026-06-01T12:00:00Z';
let graph: FakeWhatsAppGraph;
let twilio: FakeTwilioApi;
let server: TestServer | undefined;

beforeAll(async () => {
  [graph, twilio] = await Promise.all([startGraph(), startTwilio()]);
});
afterAll(async () => {
  await Promise.all([graph.close(), twilio.close()]);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function startWith(env: Record<string, string>, phone: string, channel: string) {
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: START, ...env },
    { provider: habitModel([{ type: 'fixed', fixed_time: '08:00' }]) },
  );
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: phone,
    channel,
    timezone: 'America/Toronto',
  });
  expect(created.status).toBe(201);
  const participantId = created.body.result.id as string;
  const state = async () =>
    (await server!.request('GET', `/conversation/participants/${participantId}/state`)).body.result;
  const advance = async (to: string) =>
    expect((await server!.request('POST', '/admin/clock', { to })).status).toBe(200);
  const status = async () =>
    (await server!.request('GET', `/conversation/participants/${participantId}`)).body.result.status as string;
  return { s: server, state, advance, status };
}

/** Sends via `post`, then waits until the fake provider has accepted `count` messages in all. */
async function exchange(s: TestServer, post: () => Promise<unknown>, sentCount: () => number, count: number) {
  await post();
  await s.engine.idle();
  await waitFor(() => sentCount() >= count, { what: `${count} messages sent` });
}

describe('habit coaching over WhatsApp', () => {
  it(
    'enrol, set up, get the prompt with reply buttons, answer both polls by button, and get a template after ' +
      '24 h of silence',
    async () => {
      const phone = '+16505551234';
      const { s, state, advance } = await startWith(whatsappEnv(graph), phone, 'whatsapp');
      const sent = () => graph.to('16505551234').map((send) => send.body);
      await waitFor(() => sent().length === 1, { what: 'greeting' });
      expect(sent()[0]).toMatchObject({
        type: 'template',
        template: { components: [{ parameters: [{ text: 'Welcome!' }] }] },
      }); // never wrote: the window is closed

      const now = () => s.clock.now();
      await exchange(
        s,
        () => postWhatsApp(s, whatsappText('set me up', { at: now() })),
        () => sent().length,
        2,
      );
      expect(sent()[1]).toMatchObject({ type: 'text', text: { body: 'Done!' } });

      await advance('2026-06-02T12:00:00Z');
      await waitFor(() => sent().length === 5, { what: 'prompt and two polls' });
      const [prompt, done, intensity] = sent().slice(2);
      expect(prompt).toMatchObject({ type: 'text', text: { body: PROMPT_TEXT } });
      expect(done).toMatchObject({
        type: 'interactive',
        interactive: { type: 'button', body: { text: DONE_POLL_QUESTION } },
      });
      expect(done.interactive.action.buttons.map((button: any) => button.reply.title)).toEqual(['Done', 'Not yet']);
      expect(intensity.interactive.body.text).toBe(INTENSITY_POLL_QUESTION);
      expect(intensity.interactive.action.buttons.map((button: any) => button.reply.title)).toEqual([
        'Decrease',
        'Keep',
        'Increase',
      ]);

      const tap = (id: string, title: string) =>
        postWhatsApp(
          s,
          whatsappMessage(
            { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id, title } } },
            { at: now() },
          ),
        );
      await exchange(
        s,
        () => tap('opt:1', 'Done'),
        () => sent().length,
        6,
      );
      await exchange(
        s,
        () => tap('opt:3', 'Increase'),
        () => sent().length,
        7,
      );
      expect((await state()).profile).toMatchObject({ success_count: 1, intensity: 'high' });

      await advance('2026-06-04T12:00:00Z'); // two more prompts; the second is more than 24 h after the last tap
      await waitFor(() => sent().filter((body) => body.type === 'template').length >= 2, { what: 'template prompt' });
      const templates = sent()
        .filter((body) => body.type === 'template')
        .map((body) => body.template.components[0].parameters[0].text);
      expect(templates).toContain(PROMPT_TEXT);
      expect(templates).toContain(`${DONE_POLL_QUESTION} (Done / Not yet)`);
    },
  );
});

describe('habit coaching over SMS', () => {
  it('enrol, set up, get the prompt with numbered polls, answer both by number; STOP ends the prompts', async () => {
    const phone = '+14165550199';
    const { s, state, advance, status } = await startWith(twilioEnv(twilio), phone, 'twilio');
    const sent = () => twilio.to(phone).map((send) => send.params.Body);
    await waitFor(() => sent().length === 1, { what: 'greeting' });
    expect(sent()[0]).toBe('Welcome!');
    const sms = (text: string) => postTwilio(s, '/webhooks/twilio', smsForm(phone, text));

    await exchange(
      s,
      () => sms('set me up'),
      () => sent().length,
      2,
    );
    await advance('2026-06-02T12:00:00Z');
    await waitFor(() => sent().length === 5, { what: 'prompt and two polls' });
    expect(sent().slice(2)).toEqual([
      PROMPT_TEXT,
      `${DONE_POLL_QUESTION}\n1. Done\n2. Not yet\nReply with a number or the answer.`,
      `${INTENSITY_POLL_QUESTION}\n3. Decrease\n4. Keep\n5. Increase\nReply with a number or the answer.`,
    ]);

    await exchange(
      s,
      () => sms('1'),
      () => sent().length,
      6,
    );
    await exchange(
      s,
      () => sms('5'),
      () => sent().length,
      7,
    );
    expect((await state()).profile).toMatchObject({ success_count: 1, intensity: 'high' });

    await sms('STOP');
    expect(await status()).toBe('paused');
    const before = sent().length;
    await advance('2026-06-05T12:00:00Z');
    await s.engine.idle();
    expect(sent().length).toBe(before);
    expect((await state()).pending_timers).toEqual([]);
  });
});
