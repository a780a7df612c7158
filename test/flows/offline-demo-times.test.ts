import { afterEach, describe, expect, it } from 'vitest';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// The offline demo model (no provider override, as `npm start` runs) on a virtual clock that
// starts at 08:00 in Toronto (EDT, UTC-4) on Monday 1 June.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(): Promise<TestServer> {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' });
  return server;
}

async function enrol(phone: string, name: string): Promise<string> {
  const created = await server!.request('POST', '/conversation/participants', {
    phone_number: phone,
    name,
    timezone: 'America/Toronto',
  });
  await waitFor(() => server!.sink.to(phone).length === 1, { what: 'greeting' });
  return created.body.result.id as string;
}

const say = async (phone: string, text: string) => (await sayAndWait(server!, phone, text)).join('\n');

async function coaching(id: string) {
  const state = (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;
  const promptTimers = state.pending_timers.filter((timer: { kind: string }) => timer.kind === 'daily-prompt');
  return { ...state, prompt_due: promptTimers.map((timer: { due_at: string }) => timer.due_at) };
}

/** Moves the virtual clock to `at` and returns the texts sent to `phone` meanwhile. */
async function clockTo(phone: string, at: string): Promise<string[]> {
  const before = server!.sink.to(phone).length;
  await server!.request('POST', '/admin/clock', { to: at });
  await server!.engine.idle();
  return server!.sink
    .to(phone)
    .slice(before)
    .map((message) => message.text);
}

/** Intake as the stranger did it: the last answer names the time and the anchor at once. */
async function intake(phone: string, name: string, when: string) {
  const id = await enrol(phone, name);
  await say(phone, 'I want to walk more');
  await say(phone, 'to have more energy');
  return { id, reply: await say(phone, when) };
}

describe('the offline demo model schedules the daily prompt at the time the participant named', () => {
  it('"after lunch": the profile, the schedule, the reply and the prompt all say 12:30 (12:20 with prep)', async () => {
    await start();
    const phone = '+14165550171';
    const { id, reply } = await intake(phone, 'Alice', 'after lunch');
    expect(reply).toMatch(/Here is your first habit prompt: "After lunch, spend two minutes on walking/);
    expect(reply).toContain(
      'set for every day at 12:30 (America/Toronto); ' +
        'each arrives 10 minutes ahead, so the first comes at 12:20 on Monday 1 June.',
    );
    expect(reply).not.toMatch(/09:00|08:50/);
    const state = await coaching(id);
    expect(state.profile).toMatchObject({ preferred_time: '12:30', prompt_anchor: 'after lunch' });
    expect(state.schedules).toEqual([
      expect.objectContaining({ type: 'fixed', fixed_time: '12:30', timezone: 'America/Toronto', prep_minutes: 10 }),
    ]);
    expect(state.prompt_due).toEqual(['2026-06-01T16:20:00.000Z']); // 12:20 EDT

    expect(await clockTo(phone, '2026-06-01T16:19:00Z')).toEqual([]);
    expect(await clockTo(phone, '2026-06-01T16:20:00Z')).toContainEqual(
      expect.stringMatching(/^After lunch, spend two minutes on walking/),
    );
  });

  it('"after I wake up": 08:00 in the profile and the schedule, the first prompt tomorrow at 07:50', async () => {
    await start();
    const phone = '+14165550172';
    const { id, reply } = await intake(phone, 'Eve', 'after I wake up');
    expect(reply).toMatch(/every day at 08:00 \(America\/Toronto\);.* the first comes at 07:50 on Tuesday 2 June\./);
    expect(reply).not.toMatch(/09:00/);
    const state = await coaching(id);
    expect(state.profile).toMatchObject({ preferred_time: '08:00', prompt_anchor: 'after I wake up' });
    expect(state.schedules).toEqual([expect.objectContaining({ fixed_time: '08:00' })]);
    expect(state.prompt_due).toEqual(['2026-06-02T11:50:00.000Z']);
  });

  it('a time it cannot read: schedules 09:00 and says it picked that time', async () => {
    await start();
    const phone = '+14165550173';
    const id = await enrol(phone, 'Ned');
    await say(phone, 'I want to walk more');
    await say(phone, 'to have more energy');
    await say(phone, 'whenever suits');
    const reply = await say(phone, 'when I get home');
    expect(reply).toMatch(/every day at 09:00 \(America\/Toronto\);.* the first comes at 08:50 on Monday 1 June\./);
    expect(reply).toMatch(/You did not name a time of day, so I picked 09:00/);
    const state = await coaching(id);
    expect(state.profile.preferred_time).toBe('whenever suits');
    expect(state.schedules).toEqual([expect.objectContaining({ fixed_time: '09:00' })]);
  });
});

describe('the offline demo model applies a later change of time', () => {
  it('"6pm" after intake moves the profile time and the schedule, and the reply says what changed', async () => {
    await start();
    const phone = '+14165550174';
    const { id } = await intake(phone, 'Alice', 'after lunch');

    const reply = await say(phone, '6pm');
    expect(reply).toBe(
      'Okay, I moved your daily prompt from 12:30 to 18:00. It is set for every day at 18:00 (America/Toronto); ' +
        'each arrives 10 minutes ahead, so the next comes at 17:50 on Monday 1 June. ' +
        'Your preferred time is now 18:00 (it was 12:30).',
    );
    const state = await coaching(id);
    expect(state.sub_state).toBe('FEEDBACK');
    expect(state.profile.preferred_time).toBe('18:00');
    expect(state.schedules).toEqual([expect.objectContaining({ fixed_time: '18:00', timezone: 'America/Toronto' })]);
    expect(state.prompt_due).toEqual(['2026-06-01T21:50:00.000Z']); // 17:50 EDT, the 12:20 one gone

    expect(await clockTo(phone, '2026-06-01T21:49:00Z')).toEqual([]);
    expect(await clockTo(phone, '2026-06-01T21:50:00Z')).toContainEqual(
      expect.stringMatching(/^After lunch, spend two minutes on walking/),
    );
  });

  it('"can we move it to after dinner?" moves it to 19:00; the same time again changes nothing', async () => {
    await start();
    const phone = '+14165550175';
    const { id } = await intake(phone, 'Eve', 'after I wake up');
    expect(await say(phone, 'can we move it to after dinner?')).toMatch(
      /^Okay, I moved your daily prompt from 08:00 to 19:00\..* the next comes at 18:50 on Monday 1 June\./,
    );
    expect(await say(phone, '7pm')).toBe(
      'Your daily prompt is already set for every day at 19:00 (America/Toronto). Nothing changed.',
    );
    const state = await coaching(id);
    expect(state.profile.preferred_time).toBe('19:00');
    expect(state.schedules).toEqual([expect.objectContaining({ fixed_time: '19:00' })]);
    expect(state.prompt_due).toEqual(['2026-06-01T22:50:00.000Z']);
  });

  it('a report that mentions a time is not a change of time', async () => {
    await start();
    const phone = '+14165550176';
    const { id } = await intake(phone, 'Sam', 'after lunch');
    expect(await say(phone, 'I did it at 7am today')).toMatch(/well done/i);
    const state = await coaching(id);
    expect(state.profile.preferred_time).toBe('12:30');
    expect(state.schedules).toEqual([expect.objectContaining({ fixed_time: '12:30' })]);
  });
});
