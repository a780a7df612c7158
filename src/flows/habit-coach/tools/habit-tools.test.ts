import { describe, expect, it } from 'vitest';
import { sequentialIds } from '../../../core/clock.ts';
import type { LlmProvider, LlmRequest } from '../../../llm/llm-provider.ts';
import { executeToolCall } from '../../../tools/execute-tool-call.ts';
import type { AnyTool } from '../../../tools/define-tool.ts';
import { testHabitState } from '../../../../test/kit/habit-state.ts';
import type { HabitTurnState } from '../habit-turn-state.ts';
import { generateHabitPromptTool } from './generate-habit-prompt.ts';
import { saveUserProfileTool } from './save-user-profile.ts';
import { schedulerTool } from './scheduler.ts';
import { transitionStateTool } from './transition-state.ts';

const signal = new AbortController().signal;
async function call(tool: AnyTool, args: unknown) {
  return executeToolCall(
    new Map([[tool.name, tool]]),
    { id: 'c', name: tool.name, arguments: JSON.stringify(args) },
    signal,
  );
}
const scheduler = (state: HabitTurnState) =>
  schedulerTool(state, { ids: sequentialIds(), random: () => 0.5, prepMinutes: 10 });

describe('save_user_profile', () => {
  it('merges fields, reports what changed and what is missing', async () => {
    const state = testHabitState();
    const first = await call(saveUserProfileTool(state), { habit_domain: 'walking', preferred_time: '' });
    expect(first.status).toBe('ok');
    expect(first.result).toMatch(/Saved: habit_domain = "walking"/);
    expect(first.result).toMatch(/Still missing: motivational_frame, preferred_time, prompt_anchor/);
    expect(state.profile.fields.habit_domain).toBe('walking');
    const again = await call(saveUserProfileTool(state), { habit_domain: 'walking' });
    expect(again.result).toMatch(/No profile field changed/);
  });

  it('treats last_blocker as an alias of last_barrier', async () => {
    const state = testHabitState();
    await call(saveUserProfileTool(state), { last_blocker: 'rain' });
    expect(state.profile.fields.last_barrier).toBe('rain');
  });

  it('applies explicit tone proposals and rate-limits implicit ones', async () => {
    const state = testHabitState();
    const explicit = await call(saveUserProfileTool(state), {
      tone_tags: ['Concise', 'sarcastic'],
      tone_update_source: 'explicit',
    });
    expect(explicit.result).toMatch(
      /Tone updated \(1 unknown or repeated tag\(s\) ignored\); active tone tags: concise/,
    );
    const implicit = await call(saveUserProfileTool(state), { tone_tags: ['casual'], tone_update_source: 'implicit' });
    expect(implicit.result).toMatch(/limited to one every 3 minutes/);
  });

  it('rejects wrongly typed arguments with a message naming the field', async () => {
    const outcome = await call(saveUserProfileTool(testHabitState()), { tone_update_source: 'sometimes' });
    expect(outcome).toMatchObject({ status: 'error' });
    expect(outcome.result).toMatch(/tone_update_source/);
  });
});

describe('scheduler', () => {
  it('creates fixed schedules in the participant zone and refuses duplicates', async () => {
    const state = testHabitState();
    const created = await call(scheduler(state), { action: 'create', type: 'fixed', fixed_time: '8:00' });
    expect(created.status).toBe('ok');
    expect(created.result).toMatch(/every day at 08:00 \(America\/Toronto\)/);
    expect(created.result).toMatch(/next one at 2026-06-02T11:50:00.000Z/);
    const duplicate = await call(scheduler(state), { action: 'create', type: 'fixed', fixed_time: '08:00' });
    expect(duplicate).toMatchObject({ status: 'error' });
    expect(duplicate.result).toMatch(/identical schedule already exists/);
  });

  it('stores a zone given in any case in its canonical spelling, and accepts EST5EDT', async () => {
    const state = testHabitState({}, { timezone: null });
    expect(
      (
        await call(scheduler(state), {
          action: 'create',
          type: 'fixed',
          fixed_time: '07:00',
          timezone: 'america/vancouver',
        })
      ).status,
    ).toBe('ok');
    expect(
      (await call(scheduler(state), { action: 'create', type: 'fixed', fixed_time: '08:00', timezone: 'EST5EDT' }))
        .status,
    ).toBe('ok');
    expect(state.createdSchedules.map((schedule) => schedule.timezone)).toEqual(['America/Vancouver', 'EST5EDT']);
  });

  it('defaults the zone to America/Toronto for fixed and UTC for random when the participant has none', async () => {
    const state = testHabitState({}, { timezone: null });
    expect((await call(scheduler(state), { action: 'create', type: 'fixed', fixed_time: '09:00' })).result).toMatch(
      /America\/Toronto/,
    );
    expect(
      (
        await call(scheduler(state), {
          action: 'create',
          type: 'random',
          random_start_time: '09:00',
          random_end_time: '10:00',
        })
      ).result,
    ).toMatch(/\(UTC\)/);
  });

  it.each([
    [{ action: 'create' }, /type is required/],
    [{ action: 'create', type: 'fixed' }, /fixed_time is required/],
    [{ action: 'create', type: 'fixed', fixed_time: '25:00' }, /not a valid HH:MM/],
    [
      { action: 'create', type: 'random', random_start_time: '10:00', random_end_time: '09:00' },
      /must be after random_start_time/,
    ],
    [{ action: 'create', type: 'fixed', fixed_time: '08:00', timezone: 'Mars/Base' }, /not an IANA time zone/],
    [{ action: 'delete', schedule_id: 'sch_nope' }, /unknown schedule_id "sch_nope"/],
    [{ action: 'delete' }, /schedule_id is required/],
    [{ action: 'explode' }, /action/],
  ])('explains %j', async (args, message) => {
    const outcome = await call(scheduler(testHabitState()), args);
    expect(outcome.status).toBe('error');
    expect(outcome.result).toMatch(message);
  });

  it(
    'draws a random window once: create keeps the time it tells for the timer, list reports armed times ' +
      'without drawing',
    async () => {
      const state = testHabitState();
      let draws = 0;
      const tool = schedulerTool(state, { ids: sequentialIds(), random: () => (draws++, 0.25), prepMinutes: 10 });
      const created = await call(tool, {
        action: 'create',
        type: 'random',
        random_start_time: '09:00',
        random_end_time: '11:00',
        timezone: 'UTC',
      });
      const id = state.schedules[0]!.id;
      const told = state.nextPromptAt.get(id)!.toISOString();
      expect(created.result).toContain(`the next one at ${told}.`);
      const drawn = draws;
      state.schedules.push({ ...state.schedules[0]!, id: 'sch_unarmed', windowStart: '12:00', windowEnd: '13:00' });
      const listed = await call(tool, { action: 'list' });
      expect(listed.result).toContain(
        `- ${id}: every day at a random time between 09:00 and 11:00 (UTC); next prompt at ${told}`,
      );
      expect(listed.result).toContain(
        '- sch_unarmed: every day at a random time between 12:00 and 13:00 (UTC); no prompt is pending',
      );
      expect(draws).toBe(drawn);
    },
  );

  it('lists and deletes', async () => {
    const state = testHabitState();
    await call(scheduler(state), { action: 'create', type: 'fixed', fixed_time: '08:00' });
    const id = state.schedules[0]!.id;
    expect((await call(scheduler(state), { action: 'list' })).result).toContain(id);
    expect((await call(scheduler(state), { action: 'delete', schedule_id: id })).status).toBe('ok');
    expect(state.schedules).toEqual([]);
    expect(state.createdSchedules).toEqual([]);
    expect((await call(scheduler(state), { action: 'list' })).result).toBe('No active schedules.');
  });
});

describe('transition_state', () => {
  it('moves now, cancelling a pending delayed transition', async () => {
    const state = testHabitState({ delayedTransition: { target: 'FEEDBACK', dueAt: new Date() } });
    const outcome = await call(transitionStateTool(state), { target_state: 'FEEDBACK' });
    expect(outcome.result).toMatch(/Moved from INTAKE to FEEDBACK/);
    expect(state).toMatchObject({ subState: 'FEEDBACK', subStateChanged: true, delayedTransition: null });
  });

  it('schedules a fractional delay without moving now', async () => {
    const state = testHabitState();
    await call(transitionStateTool(state), { target_state: 'FEEDBACK', delay_minutes: 0.5 });
    expect(state.subState).toBe('INTAKE');
    expect((state.delayedTransition?.dueAt.getTime() ?? 0) - state.startedAt.getTime()).toBe(30_000);
  });

  it.each([
    [{ target_state: 'COORDINATOR' }],
    [{ target_state: 'FEEDBACK', delay_minutes: 0 }],
    [{ target_state: 'FEEDBACK', delay_minutes: -5 }],
  ])('rejects %j', async (args) =>
    expect((await call(transitionStateTool(testHabitState()), args)).status).toBe('error'),
  );
});

describe('generate_habit_prompt', () => {
  const generator = (text: string): LlmProvider & { requests: LlmRequest[] } => {
    const requests: LlmRequest[] = [];
    return {
      name: 'scripted',
      model: 'm',
      requests,
      complete: async (request) => (requests.push(request), { text, toolCalls: [], finishReason: 'stop', model: 'm' }),
    };
  };

  it('needs prompt_anchor and preferred_time', async () => {
    const outcome = await call(
      generateHabitPromptTool(testHabitState(), { provider: generator('x'), systemPrompt: 'S' }),
      { delivery_mode: 'immediate' },
    );
    expect(outcome).toMatchObject({ status: 'error' });
    expect(outcome.result).toMatch(/missing prompt_anchor and preferred_time/);
  });

  it('generates with its own model call, stores the prompt and warns about optional gaps', async () => {
    const state = testHabitState();
    state.profile.fields = { prompt_anchor: 'after breakfast', preferred_time: '08:00' };
    const provider = generator('After breakfast, walk for 5 minutes.');
    const outcome = await call(generateHabitPromptTool(state, { provider, systemPrompt: 'GENERATOR' }), {
      delivery_mode: 'immediate',
    });
    expect(outcome.result).toMatch(/After breakfast, walk for 5 minutes/);
    expect(outcome.result).toMatch(/habit_domain and motivational_frame unknown/);
    expect(state.profile.lastHabitPrompt).toBe('After breakfast, walk for 5 minutes.');
    expect(provider.requests[0]?.messages[0]).toEqual({ role: 'system', content: 'GENERATOR' });
    expect(provider.requests[0]?.tools).toBeUndefined();
  });
});
