import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import type { ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { isGenerator, PROMPT_TEXT, startHabitFixture, type HabitFixture } from '../timers/habit-fixture.ts';

// What the model reads back from the habit tools, through the HTTP API with a scripted model:
// spec 002 §9 scenarios 3 and 12, and tool argument errors (BEHAVIOR-NOTES "Tool loop").
let fixture: HabitFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

type ToolCall = { name: string; arguments: unknown };
const T0 = '2026-06-01T12:00:00Z';
const call = (name: string, args: unknown): ScriptedStep => ({ toolCalls: [{ name, arguments: args }] });
const toolResults = (request: LlmRequest) =>
  request.messages.filter((message) => message.role === 'tool').map((message) => message.content);
const isToneGuide = (message: { role: string; content: string }) =>
  message.role === 'system' && message.content.startsWith('Tone guide');

async function start(phone: string, onUser: (text: string) => ScriptedStep | undefined) {
  fixture = await startHabitFixture({ clockStart: T0, phone, schedules: [], onUser });
  return fixture;
}

/** What the model read after its tool calls of the last turn. */
const lastToolResults = () => toolResults(fixture!.provider.requests.at(-1)!);
const turnToolCalls = async () =>
  (
    (await fixture!.server.request('GET', `/conversation/participants/${fixture!.participantId}/turns?limit=100`)).body
      .result as Array<{
      tool_calls: Array<{ name: string; status: string; result: string }>;
    }>
  ).flatMap((turn) => turn.tool_calls);

describe('scenario 3: the prompt generation path', () => {
  const script = (text: string) =>
    ({
      'prompt now': call('generate_habit_prompt', { delivery_mode: 'immediate' }),
      'prompt later': call('generate_habit_prompt', {
        delivery_mode: 'scheduled',
        personalization_notes: 'it is raining today',
      }),
      'anchor only': call('save_user_profile', { prompt_anchor: 'after coffee' }),
      'keep it short': call('save_user_profile', { tone_tags: ['concise'], tone_update_source: 'explicit' }),
    })[text];

  it(
    '3: without prompt_anchor or preferred_time the model reads exactly what is missing, no generator call is ' +
      'made, and the turn goes on',
    async () => {
      const { say, provider, state } = await start('+14165550311', script);
      expect(await say('prompt now')).toEqual(['Done!']);
      expect(lastToolResults()).toEqual([expect.stringMatching(/^Error: .*missing prompt_anchor and preferred_time/)]);

      await say('anchor only');
      expect(await say('prompt now')).toEqual(['Done!']);
      const [result] = lastToolResults();
      expect(result).toMatch(/^Error: .*missing preferred_time\b/);
      expect(result).not.toMatch(/missing prompt_anchor/);

      expect(provider.requests.filter(isGenerator)).toEqual([]);
      expect((await state()).profile.last_habit_prompt).toBeNull();
      expect(
        (await turnToolCalls())
          .filter((toolCall) => toolCall.name === 'generate_habit_prompt')
          .map((toolCall) => toolCall.status),
      ).toEqual(['error', 'error']);
    },
  );

  it(
    '3: immediate and scheduled delivery: the generator works from the profile (tone guide only once a tag is ' +
      'active), the model reads the prompt, and it is stored',
    async () => {
      const { say, provider, state } = await start('+14165550312', script);
      await say('set me up');

      await say('prompt now');
      const first = provider.requests.filter(isGenerator).at(-1)!;
      expect(first.messages.some(isToneGuide)).toBe(false);
      const profileLines = [
        'Habit domain: walking',
        'Motivation: energy',
        'Preferred time: 08:00',
        'Anchor: after coffee',
        'Intensity: normal',
      ];
      expect(first.messages.at(-1)!.content).toMatch(new RegExp(profileLines.join('[\\s\\S]*')));
      expect(lastToolResults()).toEqual([expect.stringContaining(`"${PROMPT_TEXT}"`)]);
      expect(lastToolResults()[0]).toMatch(/share it with the participant/);
      expect((await state()).profile.last_habit_prompt).toBe(PROMPT_TEXT);

      await say('keep it short');
      await say('prompt later');
      const second = provider.requests.filter(isGenerator).at(-1)!;
      expect(second.messages.filter(isToneGuide)).toEqual([
        expect.objectContaining({ content: expect.stringMatching(/short/) }),
      ]);
      expect(second.messages.at(-1)!.content).toMatch(/Notes for this time: it is raining today/);
      expect(lastToolResults()[0]).toMatch(/saved as the latest prompt.*sends this one only if that fails/);
      expect(
        (await turnToolCalls())
          .filter((toolCall) => toolCall.name === 'generate_habit_prompt')
          .map((toolCall) => toolCall.status),
      ).toEqual(['ok', 'ok']);
    },
  );
});

describe('scenario 12: tone updates through save_user_profile', () => {
  const propose = (source: 'implicit' | 'explicit', tags: string[], confidence?: number) =>
    call('save_user_profile', {
      tone_tags: tags,
      tone_update_source: source,
      ...(confidence === undefined ? {} : { tone_confidence: confidence }),
    });
  const script = (text: string) =>
    ({
      implicit: propose('implicit', ['concise', 'Shouty', 'CONCISE'], 0.1),
      'implicit warm': propose('implicit', ['warm_supportive']),
      explicit: propose('explicit', ['concise']),
      hello: { text: 'Hi.' },
    })[text];

  it(
    '12: the 3-minute implicit limit counts from the last applied update; a refused or unchanged proposal ' +
      'does not restart it',
    async () => {
      const { say, advance, state, provider } = await start('+14165550313', script);
      const tone = async () => (await state()).profile.tone;

      await say('implicit'); // the first implicit proposal applies at once; confidence is ignored
      expect(lastToolResults()[0]).toMatch(/Tone updated \(2 unknown or repeated tag\(s\) ignored\)/);
      expect(await tone()).toEqual({
        scores: { concise: 0.15 },
        active: [],
        last_updated_at: '2026-06-01T12:00:00.000Z',
      });
      await say('hello');
      expect(provider.requests.at(-1)!.messages.some(isToneGuide)).toBe(false);

      await advance('2m59s');
      await say('implicit');
      expect(lastToolResults()[0]).toMatch(/limited to one every 3 minutes/);
      expect(await tone()).toMatchObject({ scores: { concise: 0.15 }, last_updated_at: '2026-06-01T12:00:00.000Z' });

      await advance('1s');
      await say('implicit');
      expect(await tone()).toEqual({
        scores: { concise: 0.2775 },
        active: [],
        last_updated_at: '2026-06-01T12:03:00.000Z',
      });

      await say('explicit'); // explicit: no wait, set to 1.0, active at once
      expect(await tone()).toEqual({
        scores: { concise: 1 },
        active: ['concise'],
        last_updated_at: '2026-06-01T12:03:00.000Z',
      });
      await say('hello');
      expect(provider.requests.at(-1)!.messages.filter(isToneGuide)).toHaveLength(1);

      await advance('1m');
      await say('explicit'); // nothing to change: no update is recorded
      expect(lastToolResults()[0]).toMatch(/Tone unchanged/);
      expect((await tone()).last_updated_at).toBe('2026-06-01T12:03:00.000Z');

      await advance('2m'); // 3 minutes after the last applied update, 2 after the unchanged one
      await say('implicit warm'); // observed: 0.15; unobserved concise decays to 0.85 and stays active
      expect(lastToolResults()[0]).toMatch(/Tone updated/);
      expect(await tone()).toEqual({
        scores: { concise: 0.85, warm_supportive: 0.15 },
        active: ['concise'],
        last_updated_at: '2026-06-01T12:06:00.000Z',
      });
    },
  );
});

describe('scheduler: the next prompt time the model reads is the time the timer is armed for', () => {
  /** Each draw differs from the last, so a second draw for the same firing would show. */
  const cyclingRandom = () => {
    const draws = [0.1, 0.9, 0.5, 0.3, 0.7];
    let next = 0;
    return () => draws[next++ % draws.length]!;
  };
  const window = {
    action: 'create',
    type: 'random',
    random_start_time: '09:00',
    random_end_time: '11:00',
    timezone: 'UTC',
  };
  const script = (text: string) =>
    ({ window: call('scheduler', window), list: call('scheduler', { action: 'list' }) })[text];
  const armedPrompt = async () => {
    const timers = (await fixture!.state()).pending_timers as Array<{ kind: string; due_at: string }>;
    return timers.filter((timer) => timer.kind === 'daily-prompt').map((timer) => timer.due_at);
  };

  it(
    'create and list report the armed due time (the send time, prep minutes before the target), and the ' +
      'prompt goes out then',
    async () => {
      fixture = await startHabitFixture({
        clockStart: T0,
        phone: '+14165550316',
        schedules: [],
        onUser: script,
        random: cyclingRandom(),
      });
      await fixture.say('window');
      const told = /the next one at (\S+)\./.exec(lastToolResults()[0]!)?.[1];
      const [armed] = await armedPrompt();
      expect(armed).toBeDefined();
      expect(told).toBe(armed);
      // Today's window has passed: tomorrow, inside 09:00-11:00 UTC less the 10 prep minutes.
      expect(armed! >= '2026-06-02T08:50:00.000Z' && armed! <= '2026-06-02T10:50:00.000Z').toBe(true);

      await fixture.say('list');
      expect(lastToolResults()[0]).toMatch(new RegExp(`next prompt at ${armed}$`));

      await fixture.say('set me up'); // the profile a generated prompt needs
      await fixture.advance(armed!);
      expect(fixture.prompts().map((message) => message.createdAt.toISOString())).toEqual([armed]);
      const [rearmed] = await armedPrompt();
      expect(rearmed).not.toBe(armed);
      await fixture.say('list');
      expect(lastToolResults()[0]).toMatch(new RegExp(`next prompt at ${rearmed}$`));
    },
  );
});

describe('tool errors reach the model', () => {
  // The argument errors the table in habit-coach-scenarios-timed.test.ts leaves out.
  const cases: Array<[string, ToolCall | { name: string; arguments: string }, RegExp]> = [
    ['unknown tool', { name: 'send_sms', arguments: {} }, /unknown tool "send_sms"/],
    ['arguments that are not JSON', { name: 'scheduler', arguments: '{"action": "create"' }, /not valid JSON/],
    [
      'create without a type',
      { name: 'scheduler', arguments: { action: 'create', fixed_time: '08:00' } },
      /type is required/,
    ],
    [
      'fixed without fixed_time',
      { name: 'scheduler', arguments: { action: 'create', type: 'fixed' } },
      /fixed_time is required/,
    ],
    [
      'random without an end',
      { name: 'scheduler', arguments: { action: 'create', type: 'random', random_start_time: '09:00' } },
      /random_end_time/,
    ],
    [
      'random with an equal start and end',
      {
        name: 'scheduler',
        arguments: { action: 'create', type: 'random', random_start_time: '09:00', random_end_time: '09:00' },
      },
      /must be after/,
    ],
    ['delete without an id', { name: 'scheduler', arguments: { action: 'delete' } }, /schedule_id is required/],
    [
      'a zero delay',
      { name: 'transition_state', arguments: { target_state: 'FEEDBACK', delay_minutes: 0 } },
      /delay_minutes/,
    ],
    [
      'a negative delay',
      { name: 'transition_state', arguments: { target_state: 'FEEDBACK', delay_minutes: -5 } },
      /delay_minutes/,
    ],
    [
      'a tone confidence above 1',
      { name: 'save_user_profile', arguments: { tone_tags: ['concise'], tone_confidence: 2 } },
      /tone_confidence/,
    ],
    [
      'an unknown tone source',
      { name: 'save_user_profile', arguments: { tone_tags: ['concise'], tone_update_source: 'guess' } },
      /tone_update_source/,
    ],
  ];

  it(
    'each bad call comes back to the model as an error result naming the problem, the same text is audited, ' +
      'nothing is stored, and the turn goes on',
    async () => {
      const { say, state } = await start('+14165550314', (text) => ({ toolCalls: [cases[Number(text)]![1]] }));
      const seen: string[] = [];
      for (const [index] of cases.entries()) {
        expect(await say(String(index))).toEqual(['Done!']);
        seen.push(...lastToolResults());
      }
      const audited = await turnToolCalls();
      cases.forEach(([label, , pattern], index) => {
        expect(seen[index], label).toMatch(/^Error: /);
        expect(seen[index], label).toMatch(pattern);
        expect(audited[index], label).toMatchObject({ status: 'error', result: seen[index] });
      });
      const after = await state();
      expect(after).toMatchObject({ sub_state: 'INTAKE', schedules: [], pending_timers: [] });
      expect(after.profile?.tone.scores ?? {}).toEqual({});
    },
  );

  it('a schedule identical to an active one is refused with a clear message', async () => {
    const schedule = { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '08:00' } };
    const { say, state } = await start('+14165550315', () => ({ toolCalls: [schedule] }));
    await say('schedule');
    await say('schedule again');
    expect(lastToolResults()[0]).toMatch(/^Error: an identical schedule already exists \(sch_\w+/);
    expect((await state()).schedules).toHaveLength(1);
  });
});
