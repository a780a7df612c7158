import { afterEach, describe, expect, it } from 'vitest';
import { randomIds, type IdGenerator } from '../../src/core/clock.ts';
import { AppError } from '../../src/core/errors.ts';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import type { VirtualClock } from '../../src/timers/virtual-clock.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  generator.down = false;
});

const PHONE = '+14165550150';
const isGenerator = (request: LlmRequest) =>
  request.messages[0]?.content.startsWith('You write one short daily habit prompt');
/** The prompt generator's model is down (503) while this is set. */
const generator = { down: false };
const PROMPT = 'After coffee, walk around the block.';
const OUTAGE = new AppError('llm_unavailable', 'the model server answered 503', { fault: 'system', retryable: true });

/** A model that saves a complete profile and creates the schedule the test asks for, then chats. */
function model(schedule: object) {
  return createScriptedProvider((request) => {
    if (isGenerator(request))
      return generator.down ? { error: OUTAGE } : { text: 'After coffee, walk around the block.' };
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: 'Done!' };
    if (last.content === 'set me up') {
      return {
        toolCalls: [
          {
            name: 'save_user_profile',
            arguments: {
              habit_domain: 'walking',
              motivational_frame: 'energy',
              prompt_anchor: 'after coffee',
              preferred_time: '08:00',
            },
          },
          { name: 'scheduler', arguments: { action: 'create', ...schedule } },
        ],
      };
    }
    if (last.content === 'feedback in 30 seconds')
      return {
        text: 'OK',
        toolCalls: [{ name: 'transition_state', arguments: { target_state: 'FEEDBACK', delay_minutes: 0.5 } }],
      };
    return { text: 'Thanks for letting me know.' };
  });
}

async function start(schedule: object, clockStart: string, env: Record<string, string> = {}, ids?: IdGenerator) {
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: clockStart, ...env },
    { provider: model(schedule), ids },
  );
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: PHONE,
    timezone: 'America/Toronto',
  });
  await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'greeting' });
  return created.body.result.id as string;
}

async function say(text: string) {
  await server!.request('POST', '/conversation/inbound', { from: PHONE, text });
  await server!.engine.idle();
}

async function advance(body: object) {
  const response = await server!.request('POST', '/admin/clock', body);
  expect(response.status).toBe(200);
  return response.body.result as { now: string; fired: number };
}

const texts = () => server!.sink.to(PHONE).map((message) => message.text);
const localTime = (at: Date) =>
  at.toLocaleString('en-CA', { timeZone: 'America/Toronto', hour12: false, hour: '2-digit', minute: '2-digit' });

describe('habit timers on the virtual clock', () => {
  it('sends the daily prompt at 07:50 local with the polls, then exactly one reminder if no reply comes', async () => {
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('set me up');
    const timers = (await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result;
    expect(timers).toEqual([expect.objectContaining({ kind: 'daily-prompt', due_at: '2026-06-02T11:50:00.000Z' })]);

    await advance({ to: '2026-06-02T11:50:00Z' });
    const prompt = server!.sink.to(PHONE).find((message) => message.text === 'After coffee, walk around the block.');
    expect(prompt && localTime(prompt.createdAt)).toBe('07:50');
    expect(
      server!.sink
        .to(PHONE)
        .filter((message) => message.kind === 'poll')
        .map((message) => message.poll?.question),
    ).toEqual(['Did you do it?', 'How should your next prompts feel?']);
    const state = (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.profile.total_prompts).toBe(1);

    await advance({ advance: '6h' });
    expect(texts().filter((text) => /Friendly check-in/.test(text))).toHaveLength(1);
    await advance({ advance: '6h' });
    expect(texts().filter((text) => /Friendly check-in/.test(text))).toHaveLength(1);

    // Each firing has its turn record: the prompt with its model call, the reminder, the rest.
    const turns = (await server!.request('GET', `/conversation/participants/${id}/turns`)).body.result as Array<{
      trigger: string;
      module: string;
      status: string;
      model_calls: number;
    }>;
    const fired = turns.filter((turn) => turn.trigger === 'timer');
    expect(fired.find((turn) => turn.module === 'daily-prompt')).toMatchObject({ status: 'completed', model_calls: 1 });
    expect(fired.find((turn) => turn.module === 'reminder')).toMatchObject({ status: 'completed', model_calls: 0 });
  });

  it('a reply at +1h means no reminder at +5h, and Done counts a success once', async () => {
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('set me up');
    await advance({ to: '2026-06-02T11:50:00Z' });
    await advance({ advance: '1h' });
    await say('Done');
    await say('done');
    await advance({ advance: '5h' });
    expect(texts().some((text) => /Friendly check-in/.test(text))).toBe(false);
    // The 15-minute nudge came before the reply.
    expect(texts().some((text) => /How did it go with your habit/.test(text))).toBe(true);
    const state = (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.profile.success_count).toBe(1);
    expect(state.sub_state).toBe('FEEDBACK'); // auto-feedback after 5 minutes
  });

  it('sends the intensity poll once per local day and keeps firing daily', async () => {
    await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('set me up');
    const result = await advance({ advance: '3d' });
    const prompts = server!.sink.to(PHONE).filter((message) => message.text === 'After coffee, walk around the block.');
    expect(prompts.map((message) => message.createdAt.toISOString())).toEqual([
      '2026-06-02T11:50:00.000Z',
      '2026-06-03T11:50:00.000Z',
      '2026-06-04T11:50:00.000Z',
    ]);
    expect(texts().filter((text) => text === 'How should your next prompts feel?')).toHaveLength(3);
    expect(result.fired).toBeGreaterThanOrEqual(3);
  });

  it('fires at 07:50 local on the days around a DST change', async () => {
    await start({ type: 'fixed', fixed_time: '08:00' }, '2026-03-06T20:00:00Z');
    await say('set me up');
    await advance({ advance: '4d' });
    const prompts = server!.sink.to(PHONE).filter((message) => message.text === 'After coffee, walk around the block.');
    expect(prompts.map((message) => localTime(message.createdAt))).toEqual(['07:50', '07:50', '07:50', '07:50']);
    expect(prompts.map((message) => message.createdAt.toISOString().slice(11, 16))).toEqual([
      '12:50',
      '11:50',
      '11:50',
      '11:50',
    ]); // US clocks spring forward on Sunday 8 March 2026
  });

  it('fires at 07:50 local on the days around the autumn DST change', async () => {
    await start({ type: 'fixed', fixed_time: '08:00' }, '2026-10-30T20:00:00Z');
    await say('set me up');
    await advance({ advance: '4d' });
    const prompts = server!.sink.to(PHONE).filter((message) => message.text === 'After coffee, walk around the block.');
    expect(prompts.map((message) => localTime(message.createdAt))).toEqual(['07:50', '07:50', '07:50', '07:50']);
    // US clocks fall back on Sunday 1 November 2026.
    expect(prompts.map((message) => message.createdAt.toISOString().slice(5, 16))).toEqual([
      '10-31T11:50',
      '11-01T12:50',
      '11-02T12:50',
      '11-03T12:50',
    ]);
  });

  it('fires a random-window schedule inside its window (minus prep) every day', async () => {
    await start(
      { type: 'random', random_start_time: '09:00', random_end_time: '11:00', timezone: 'UTC' },
      '2026-06-01T12:00:00Z',
    );
    await say('set me up');
    await advance({ advance: '5d' });
    const prompts = server!.sink.to(PHONE).filter((message) => message.text === 'After coffee, walk around the block.');
    expect(prompts).toHaveLength(5);
    for (const message of prompts) {
      const minutes = message.createdAt.getUTCHours() * 60 + message.createdAt.getUTCMinutes();
      expect(minutes).toBeGreaterThanOrEqual(8 * 60 + 50);
      expect(minutes).toBeLessThanOrEqual(10 * 60 + 50);
    }
  });

  it('deleting the schedule or pausing the participant stops prompts; resuming re-arms them', async () => {
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('set me up');
    await server!.request('PUT', `/conversation/participants/${id}`, { status: 'paused' });
    expect((await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result).toEqual([]);
    await advance({ advance: '2d' });
    expect(texts()).not.toContain('After coffee, walk around the block.');
    await server!.request('PUT', `/conversation/participants/${id}`, { status: 'active' });
    expect((await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result).toHaveLength(1);
    await advance({ advance: '1d' });
    expect(texts()).toContain('After coffee, walk around the block.');
  });

  it('a daily prompt that fails for good is lost, its schedule is not: the next day fires', async () => {
    // Timer ids fail while armed: the prompt's transaction (it arms the follow-ups) rolls back.
    let failures = 0;
    const ids: IdGenerator = {
      next: (prefix) => {
        if (prefix === 'tmr' && failures > 0 && failures--) throw new Error('injected failure');
        return randomIds.next(prefix);
      },
    };
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z', {}, ids);
    await say('set me up');
    failures = 10; // one per attempt; the eleventh id (the give-up's) is given
    await advance({ to: '2026-06-02T12:30:00Z' }); // 07:50 local, then the retries over 30.6 minutes
    expect(failures).toBe(0);
    expect(texts()).not.toContain('After coffee, walk around the block.');
    const timers = (await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result;
    expect(timers).toEqual([expect.objectContaining({ kind: 'daily-prompt', due_at: '2026-06-03T11:50:00.000Z' })]);
    await advance({ to: '2026-06-03T12:00:00Z' });
    expect(texts().filter((text) => text === 'After coffee, walk around the block.')).toHaveLength(1);

    // When giving up fails too, the timer is kept and tried again later: this time it goes out late.
    failures = 11;
    await advance({ to: '2026-06-04T13:00:00Z' });
    expect(failures).toBe(0);
    expect(texts().filter((text) => text === 'After coffee, walk around the block.')).toHaveLength(2);
  });

  it('skips a daily prompt found over 2 h late (the server was down), arms the next; 1 h 40 late is sent', async () => {
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('set me up');
    const clock = server!.clock as VirtualClock;
    // The server was down from before 07:50 local until 10:00: the clock moves on without firing.
    clock.set(new Date('2026-06-02T14:00:00Z'));
    await advance({ advance: '1m' });
    expect(texts()).not.toContain(PROMPT);
    const timers = (await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result;
    expect(timers).toEqual([expect.objectContaining({ kind: 'daily-prompt', due_at: '2026-06-03T11:50:00.000Z' })]);
    // Down again until 09:30 the next day: late, but within the two hours, it goes out.
    clock.set(new Date('2026-06-03T13:30:00Z'));
    await advance({ advance: '1m' });
    expect(texts().filter((text) => text === PROMPT)).toHaveLength(1);
  });

  it('a prompt due while the model is down goes out when back; after 30 min down, the last good prompt', async () => {
    const prompts = () => server!.sink.to(PHONE).filter((message) => message.text === PROMPT);
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('set me up');

    generator.down = true;
    await advance({ to: '2026-06-02T11:52:00Z' }); // due at 11:50: tried at 11:50:00, :05, :15, :35 and 11:51:15
    expect(prompts()).toEqual([]);
    expect(texts()).not.toContain('Did you do it?');
    generator.down = false;
    await advance({ to: '2026-06-02T11:55:00Z' }); // the next try, at 11:52:35, works
    expect(prompts().map((message) => message.createdAt.toISOString())).toEqual(['2026-06-02T11:52:35.000Z']);
    expect(texts().filter((text) => text === 'Did you do it?')).toHaveLength(1);
    // The operator sees the prompt wait: five failed runs, then the one that worked, on its sixth attempt.
    const turns = (await server!.request('GET', `/conversation/participants/${id}/turns`)).body.result as Array<{
      module: string;
      status: string;
      attempts: number;
      error: string | null;
    }>;
    const runs = turns.filter((turn) => turn.module === 'daily-prompt');
    expect(runs.map(({ status, attempts }) => [status, attempts])).toEqual([
      ['failed', 1],
      ['failed', 2],
      ['failed', 3],
      ['failed', 4],
      ['failed', 5],
      ['completed', 6],
    ]);
    expect(runs[0]!.error).toContain('503');

    // Down all day: tries until the next one would be more than 30 minutes late (12:20:35), then
    // the last good prompt goes out, once.
    generator.down = true;
    await advance({ to: '2026-06-03T12:10:00Z' });
    expect(prompts()).toHaveLength(1);
    await advance({ to: '2026-06-03T13:00:00Z' });
    expect(prompts().map((message) => message.createdAt.toISOString())).toEqual([
      '2026-06-02T11:52:35.000Z',
      '2026-06-03T12:10:35.000Z',
    ]);
    expect(texts().filter((text) => text === 'Did you do it?')).toHaveLength(2);
    const timers = (await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result;
    expect(timers).toContainEqual(
      expect.objectContaining({ kind: 'daily-prompt', due_at: '2026-06-04T11:50:00.000Z' }),
    );
  });

  it('pausing while a turn or a daily prompt is being written: nothing it did is kept, no timer is left', async () => {
    // The model's call that `holding` picks waits for `release`.
    let holding: (request: LlmRequest) => boolean = () => false;
    let release!: () => void;
    let hold: Promise<void> = Promise.resolve();
    const holdWhen = (which: (request: LlmRequest) => boolean) => {
      holding = which;
      hold = new Promise((resolve) => (release = resolve));
    };
    const scripted = model({ type: 'fixed', fixed_time: '08:00' });
    const provider = createScriptedProvider(async (request) => {
      if (holding(request)) await hold;
      const response = await scripted.complete(request, {});
      return { text: response.text, toolCalls: response.toolCalls };
    });
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' }, { provider });
    const id = (
      await server.request('POST', '/conversation/participants', { phone_number: PHONE, timezone: 'America/Toronto' })
    ).body.result.id;
    await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'greeting' });
    const timers = async () => (await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result;
    const setStatus = (status: string) => server!.request('PUT', `/conversation/participants/${id}`, { status });

    // A turn: the tools ran (profile, schedule), the model is writing its reply when the pause lands.
    holdWhen((request) => request.messages.at(-1)?.role === 'tool');
    await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'set me up' });
    await waitFor(() => provider.requests.length === 3, { what: 'the model writing its reply after the tools' });
    expect((await setStatus('paused')).status).toBe(200);
    release();
    await server.engine.idle();
    await server.request('POST', '/admin/clock', { advance: '1s' });
    expect(texts()).toHaveLength(1);
    expect(await timers()).toEqual([]);
    const history = (await server.request('GET', `/conversation/participants/${id}/history`)).body.result.messages;
    expect(history.map((m: any) => [m.role, m.text])).toEqual([
      ['assistant', expect.any(String)],
      ['user', 'set me up'],
    ]);

    // A daily prompt: paused while it is generated.
    holding = () => false;
    await setStatus('active');
    await say('set me up');
    expect(await timers()).toEqual([expect.objectContaining({ kind: 'daily-prompt' })]);
    const sent = texts().length;
    holdWhen((request) => isGenerator(request) === true);
    const calls = provider.requests.length;
    const fired = server.request('POST', '/admin/clock', { to: '2026-06-02T11:50:00Z' });
    await waitFor(() => provider.requests.length > calls, { what: 'prompt generation' });
    expect((await setStatus('paused')).status).toBe(200);
    release();
    expect((await fired).status).toBe(200);
    expect(texts()).toHaveLength(sent);
    expect(await timers()).toEqual([]);
  });

  it('moves schedules with the participant when their time zone changes', async () => {
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('set me up');
    const timers = async () => (await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result;
    expect(await timers()).toEqual([expect.objectContaining({ due_at: '2026-06-02T11:50:00.000Z' })]);

    expect(
      (await server!.request('PUT', `/conversation/participants/${id}`, { timezone: 'Europe/Paris' })).status,
    ).toBe(200);
    const state = (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.schedules.map((schedule: any) => schedule.timezone)).toEqual(['Europe/Paris']);
    expect(await timers()).toEqual([expect.objectContaining({ due_at: '2026-06-02T05:50:00.000Z' })]); // 07:50 in Paris
    await advance({ to: '2026-06-02T05:50:00Z' });
    expect(texts()).toContain('After coffee, walk around the block.');
  });

  it('leaves a schedule pinned to another zone where it is when the participant moves', async () => {
    const id = await start({ type: 'fixed', fixed_time: '08:00', timezone: 'Asia/Tokyo' }, '2026-06-01T12:00:00Z');
    await say('set me up');
    const before = (await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result;
    await server!.request('PUT', `/conversation/participants/${id}`, { timezone: 'Europe/Paris' });
    const state = (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.schedules.map((schedule: any) => schedule.timezone)).toEqual(['Asia/Tokyo']);
    expect((await server!.request('GET', `/conversation/participants/${id}/timers`)).body.result).toEqual(before);
  });

  it('fires a 0.5-minute delayed transition at 30 s, not before', async () => {
    const id = await start({ type: 'fixed', fixed_time: '08:00' }, '2026-06-01T12:00:00Z');
    await say('feedback in 30 seconds');
    await advance({ advance: '29s' });
    expect((await server!.request('GET', `/conversation/participants/${id}/state`)).body.result.sub_state).toBe(
      'INTAKE',
    );
    await advance({ advance: '1s' });
    expect((await server!.request('GET', `/conversation/participants/${id}/state`)).body.result.sub_state).toBe(
      'FEEDBACK',
    );
  });

  it('refuses to move the system clock and validates clock requests', async () => {
    server = await startTestServer({}, { provider: model({}) });
    expect(await server.request('POST', '/admin/clock', { advance: '1h' })).toMatchObject({
      status: 409,
      body: { code: 'clock_not_virtual' },
    });
    expect((await server.request('GET', '/admin/clock')).body.result.mode).toBe('system');
    await server.close();
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' }, { provider: model({}) });
    expect(await server.request('POST', '/admin/clock', { advance: 'soon' })).toMatchObject({
      status: 400,
      body: { field: 'advance' },
    });
    expect(await server.request('POST', '/admin/clock', { to: '2020-01-01T00:00:00Z' })).toMatchObject({
      status: 400,
      body: { field: 'to' },
    });
    // Out of any date's range: refused, and the clock (and everything using it) keeps working.
    expect(await server.request('POST', '/admin/clock', { advance: '99999999999999h' })).toMatchObject({
      status: 400,
      body: { field: 'advance' },
    });
    expect(await server.request('POST', '/admin/clock', { to: '9999-12-31T23:59:59Z' })).toMatchObject({
      status: 400,
      body: { field: 'to' },
    });
    expect((await server.request('POST', '/admin/clock', { advance: '90m' })).body.result).toEqual({
      now: '2026-06-01T13:30:00.000Z',
      fired: 0,
    });
    expect((await server.request('POST', '/conversation/participants', { phone_number: '+14165550111' })).status).toBe(
      201,
    );
    // Many allowed moves still stop short of dates the store cannot hold.
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push((await server.request('POST', '/admin/clock', { advance: '3660d' })).status);
    expect(statuses.slice(0, 17).every((status) => status === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(400);
    expect((await server.request('POST', '/conversation/participants', { phone_number: '+14165550112' })).status).toBe(
      201,
    );
  });
});
