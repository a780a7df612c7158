import { afterEach, describe, expect, it } from 'vitest';
import {
  FEEDBACK_FOLLOWUP_TEXT,
  FEEDBACK_NUDGE_TEXT,
  REMINDER_TEXT,
} from '../../src/flows/habit-coach/timers/follow-up-timers.ts';
import {
  moduleOf,
  PROMPT_TEXT,
  startHabitFixture,
  type HabitFixture,
  type HabitFixtureOptions,
} from './habit-fixture.ts';

// What happens after a daily prompt (spec 002 §9 scenarios 7 and 11, BEHAVIOR-NOTES "Timers"):
// the reminder, auto-feedback and the feedback nudges. The 08:00 schedule's prompt goes out at
// 07:50 Toronto time, 11:50Z.
let fixture: HabitFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const PROMPT_AT = '2026-06-02T11:50:00Z';

/** Enrolls, sets up an 08:00 schedule and lets the first prompt go out. */
async function afterFirstPrompt(options: Partial<HabitFixtureOptions> = {}) {
  fixture = await startHabitFixture({ clockStart: '2026-06-01T12:00:00Z', phone: '+14165550302', ...options });
  await fixture.say('set me up');
  await fixture.advance(PROMPT_AT);
  expect(fixture.prompts()).toHaveLength(1);
  return fixture;
}

const sentAt = (text: string) =>
  fixture!
    .messages()
    .filter((message) => message.text === text)
    .map((message) => message.createdAt.toISOString());
const pendingKinds = async () =>
  ((await fixture!.state()).pending_timers as Array<{ kind: string }>).map((timer) => timer.kind).sort();

describe('scenario 7: the reminder, then a late reply', () => {
  it(
    '7: the reminder goes out once at +5 h; a later reply is answered by the feedback module, which sees the ' +
      'prompt and the reminder',
    async () => {
      const { advance, say, provider } = await afterFirstPrompt();
      await advance('5h');
      expect(sentAt(REMINDER_TEXT)).toEqual(['2026-06-02T16:50:00.000Z']);
      await advance('1h');
      expect(await say('I did it after lunch')).toEqual(['Thanks for letting me know.']);
      const request = provider.requests.at(-1)!;
      expect(moduleOf(request)).toBe('FEEDBACK');
      const assistantSaid = request.messages
        .filter((message) => message.role === 'assistant')
        .map((message) => message.content);
      expect(assistantSaid).toContain(PROMPT_TEXT);
      expect(assistantSaid).toContain(REMINDER_TEXT);
      expect(request.messages.at(-1)).toMatchObject({ role: 'user', content: 'I did it after lunch' });

      await advance('2026-06-03T11:00:00Z'); // up to the next day's prompt
      expect(sentAt(REMINDER_TEXT)).toHaveLength(1);
      expect(await pendingKinds()).toEqual(['daily-prompt']);
    },
  );
});

describe('scenario 11: auto-feedback after a prompt', () => {
  it('11: five minutes after a prompt with no reply the sub-state becomes FEEDBACK, and nothing is sent', async () => {
    const { advance, state, messages } = await afterFirstPrompt();
    const sent = messages().length;
    await advance('4m59s');
    expect((await state()).sub_state).toBe('INTAKE');
    await advance('1s');
    const after = await state();
    expect(after.sub_state).toBe('FEEDBACK');
    expect(after.pending_timers.map((timer: { kind: string }) => timer.kind)).not.toContain('auto-feedback');
    expect(messages()).toHaveLength(sent);
  });

  it('11: already in FEEDBACK: the auto-feedback timer writes nothing', async () => {
    fixture = await startHabitFixture({ clockStart: '2026-06-01T12:00:00Z', phone: '+14165550303' });
    await fixture.say('set me up');
    await fixture.say('feedback now');
    await fixture.advance(PROMPT_AT);
    const before = await fixture.state();
    expect(before.pending_timers.map((timer: { kind: string }) => timer.kind)).toContain('auto-feedback');
    await fixture.advance('5m');
    const after = await fixture.state();
    expect(after.pending_timers.map((timer: { kind: string }) => timer.kind)).not.toContain('auto-feedback');
    expect(after).toMatchObject({ sub_state: 'FEEDBACK', version: before.version });
  });

  it.each([
    [
      'the model keeps the conversation in INTAKE (transition_state)',
      async () => void (await fixture!.say('intake now')),
    ],
    [
      'an operator forces INTAKE',
      async () =>
        void (await fixture!.server.request('POST', `/conversation/participants/${fixture!.participantId}/state`, {
          sub_state: 'INTAKE',
        })),
    ],
  ])(
    '11: any write of the sub-state within the five minutes cancels auto-feedback: %s',
    async (_label, writeSubState) => {
      const { advance, state } = await afterFirstPrompt();
      await advance('2m');
      await writeSubState();
      expect(await pendingKinds()).not.toContain('auto-feedback');
      await advance('10m');
      expect((await state()).sub_state).toBe('INTAKE');
    },
  );

  it('11: a newer prompt within the five minutes takes over: auto-feedback comes five minutes after it', async () => {
    const { advance, state, prompts } = await afterFirstPrompt({
      schedules: [
        { type: 'fixed', fixed_time: '08:00' },
        { type: 'fixed', fixed_time: '08:03' },
      ],
    });
    await advance('2026-06-02T11:53:00Z');
    expect(prompts()).toHaveLength(2);
    await advance('2026-06-02T11:57:59Z');
    expect((await state()).sub_state).toBe('INTAKE');
    await advance('1s');
    expect((await state()).sub_state).toBe('FEEDBACK');
  });

  it.each([
    [{ AUTO_FEEDBACK_AFTER_PROMPT_ENABLED: 'false' }, null],
    [{ AUTO_FEEDBACK_DELAY: '0' }, null],
    [{ AUTO_FEEDBACK_DELAY: '2m' }, 2 * 60],
    [{ AUTO_FEEDBACK_DELAY: '30m' }, 30 * 60],
  ])('11: auto-feedback follows its configuration %j (fires after %s s; null: never)', async (env, seconds) => {
    const { advance, state } = await afterFirstPrompt({ env });
    if (seconds === null) {
      expect(await pendingKinds()).not.toContain('auto-feedback');
      await advance('2h');
      expect((await state()).sub_state).toBe('INTAKE');
      return;
    }
    await advance(`${seconds - 1}s`);
    expect((await state()).sub_state).toBe('INTAKE');
    await advance('1s');
    expect((await state()).sub_state).toBe('FEEDBACK');
  });
});

describe('feedback nudges', () => {
  it('with no reply: one nudge at +15 min and one follow-up 3 h later, nothing more', async () => {
    const { advance } = await afterFirstPrompt();
    await advance('14m59s');
    expect(sentAt(FEEDBACK_NUDGE_TEXT)).toEqual([]);
    await advance('2026-06-03T11:00:00Z');
    expect(sentAt(FEEDBACK_NUDGE_TEXT)).toEqual(['2026-06-02T12:05:00.000Z']);
    expect(sentAt(FEEDBACK_FOLLOWUP_TEXT)).toEqual(['2026-06-02T15:05:00.000Z']);
  });

  it.each([
    ['10m', [], []],
    ['1h', ['2026-06-02T12:05:00.000Z'], []],
  ])('a reply at +%s skips the nudges still to come', async (replyAfter, nudges, followUps) => {
    const { advance, say } = await afterFirstPrompt();
    await advance(replyAfter);
    await say('it went fine');
    await advance('2026-06-03T11:00:00Z');
    expect(sentAt(FEEDBACK_NUDGE_TEXT)).toEqual(nudges);
    expect(sentAt(FEEDBACK_FOLLOWUP_TEXT)).toEqual(followUps);
  });

  it.each([
    [{ FEEDBACK_INITIAL_TIMEOUT: '0' }, [], []],
    [{ FEEDBACK_FOLLOWUP_DELAY: '0' }, ['2026-06-02T12:05:00.000Z'], []],
    [
      { FEEDBACK_INITIAL_TIMEOUT: '30m', FEEDBACK_FOLLOWUP_DELAY: '1h' },
      ['2026-06-02T12:20:00.000Z'],
      ['2026-06-02T13:20:00.000Z'],
    ],
  ])('nudges follow their configuration %j; 0 disables', async (env, nudges, followUps) => {
    const { advance } = await afterFirstPrompt({ env });
    await advance('2026-06-03T11:00:00Z');
    expect(sentAt(FEEDBACK_NUDGE_TEXT)).toEqual(nudges);
    expect(sentAt(FEEDBACK_FOLLOWUP_TEXT)).toEqual(followUps);
  });
});
