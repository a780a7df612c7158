import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let server: TestServer;
const PHONE = '+14165550160';

beforeAll(async () => {
  // No provider override: the server picks the offline demo model itself, as `npm start` does.
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' });
});
afterAll(() => server.close());

async function say(text: string): Promise<string> {
  const before = server.sink.to(PHONE).length;
  await server.request('POST', '/conversation/inbound', { from: PHONE, text });
  await waitFor(() => server.sink.to(PHONE).length > before, { what: `reply to "${text}"` });
  await server.engine.idle();
  return server.sink
    .to(PHONE)
    .slice(before)
    .map((message) => message.text)
    .join('\n');
}

describe('the offline demo model runs the whole habit flow', () => {
  it('greets, completes intake, schedules, sends the daily prompt and counts Done', async () => {
    const created = await server.request('POST', '/conversation/participants', {
      phone_number: PHONE,
      name: 'Sam',
      timezone: 'America/Toronto',
    });
    const id = created.body.result.id;
    await waitFor(() => server.sink.to(PHONE).length === 1, { what: 'greeting' });
    expect(server.sink.to(PHONE)[0]?.text).toMatch(/Hi Sam!.*offline demo model.*What small daily habit/);

    expect(await say('I want to walk more')).toMatch(/Why does walking matter to you/);
    expect(await say('I want more energy')).toMatch(/What time of day/);
    expect(await say('7am')).toMatch(/What do you already do every day/);
    expect(await say('right after breakfast')).toMatch(
      /Here is your first habit prompt: "After breakfast, spend two minutes on walking.*every day at 07:00/,
    );

    const state = (await server.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state).toMatchObject({
      sub_state: 'FEEDBACK',
      profile: {
        habit_domain: 'walking',
        motivational_frame: 'I want more energy',
        preferred_time: '07:00',
        prompt_anchor: 'after breakfast',
      },
    });
    expect(state.schedules).toEqual([expect.objectContaining({ fixed_time: '07:00', timezone: 'America/Toronto' })]);

    await server.request('POST', '/admin/clock', { advance: '1d' });
    const questions = server.sink
      .to(PHONE)
      .filter((message) => message.kind === 'poll')
      .map((message) => message.poll?.question);
    expect(questions).toContain('Did you do it?');
    expect(await say('Done')).toMatch(/well done/i);
    const after = (await server.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(after.profile).toMatchObject({ success_count: 1, total_prompts: 1 });

    const health = await server.request('GET', '/health');
    expect(health.body.model).toEqual({ provider: 'offline-demo', model: 'offline-demo' });
  });
});
