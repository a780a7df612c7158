import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offlineHabitPolicy } from '../../src/flows/habit-coach/offline-policy.ts';
import { createOfflineDemoProvider } from '../../src/llm/offline/offline-demo-provider.ts';
import { ChannelSink } from '../kit/channel-sink.ts';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let server: TestServer;

beforeAll(async () => {
  // An SMS-like channel: no native polls, so they go out as "1. Done" text and come back as digits.
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' },
    {
      provider: createOfflineDemoProvider([offlineHabitPolicy]),
      channel: new ChannelSink({ capabilities: { polls: null, maxTextLength: 1600 } }),
    },
  );
});
afterAll(() => server.close());

const say = async (phone: string, text: string) => (await sayAndWait(server, phone, text)).join('\n');

/** A participant through intake, with the first daily prompt and its two polls sent as text. */
async function promptedParticipant(phone: string): Promise<string> {
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: phone,
    name: 'Sam',
    timezone: 'America/Toronto',
  });
  await waitFor(() => server.sink.to(phone).length === 1, { what: 'greeting' });
  for (const text of ['I want to walk more', 'I want more energy', '7am', 'right after breakfast'])
    await say(phone, text);
  await server.request('POST', '/admin/clock', { advance: '1d' });
  await waitFor(
    () => server.sink.to(phone).some((message) => /^How should your next prompts feel\?/.test(message.text)),
    {
      what: 'the polls',
    },
  );
  const polls = server.sink
    .to(phone)
    .map((message) => message.text)
    .filter((text) => text.includes('Reply with a number or the answer.'));
  expect(polls).toEqual([
    expect.stringMatching(/^Did you do it\?\n1\. Done\n2\. Not yet\n/),
    expect.stringMatching(/^How should your next prompts feel\?\n3\. Decrease\n4\. Keep\n5\. Increase\n/),
  ]);
  return created.body.result.id as string;
}

const profile = async (id: string) =>
  (await server.request('GET', `/conversation/participants/${id}/state`)).body.result.profile;

describe('the offline demo model answers a poll answered by number', () => {
  it('acknowledges "1" as Done and "4" as Keep, never asking for "done" again', async () => {
    const id = await promptedParticipant('+14165550171');
    const done = await say('+14165550171', '1');
    expect(done).toMatch(/well done/i);
    expect(done).not.toMatch(/reply "done"/i);
    expect(await profile(id)).toMatchObject({ success_count: 1, intensity: 'normal' });

    const keep = await say('+14165550171', '4');
    expect(keep).toBe('Got it, your prompts stay at normal intensity.');
  });

  it('says the intensity the answer set: "3" (Decrease) leads to low', async () => {
    const id = await promptedParticipant('+14165550172');
    expect(await say('+14165550172', '3')).toBe('Got it, your prompts are now at low intensity.');
    expect(await profile(id)).toMatchObject({ intensity: 'low', success_count: 0 });
  });

  it('meets "2" (Not yet) with support, takes the next reply as the barrier, and stops asking for "done"', async () => {
    const id = await promptedParticipant('+14165550173');
    expect(await say('+14165550173', '2')).toBe("That's okay, it happens. What got in the way?");
    expect(await say('+14165550173', 'too tired')).toMatch(/Thanks for telling me\. Next time/);
    expect(await profile(id)).toMatchObject({ success_count: 0, last_barrier: 'too tired' });
    // The "Did you do it?" poll is answered: a "done" now would count nothing, so none is asked for.
    expect(await say('+14165550173', 'ok')).not.toMatch(/reply "done"/i);
  });
});
