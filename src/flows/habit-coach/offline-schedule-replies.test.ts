import { describe, expect, it } from 'vitest';
import { sequentialIds } from '../../core/clock.ts';
import { executeToolCall } from '../../tools/execute-tool-call.ts';
import { testHabitState } from '../../../test/kit/habit-state.ts';
import type { HabitTurnState } from './habit-turn-state.ts';
import {
  createdScheduleIn,
  deletedScheduleIdsIn,
  deliveryText,
  listedSchedulesIn,
  timeOf,
} from './offline-schedule-replies.ts';
import { schedulerTool } from './tools/scheduler.ts';

const signal = new AbortController().signal;
const ids = sequentialIds();

/** The scheduler tool's own result text, as the offline model reads it. */
async function scheduler(state: HabitTurnState, args: Record<string, unknown>, prepMinutes = 10): Promise<string> {
  const tool = schedulerTool(state, { ids, random: () => 0, prepMinutes });
  const outcome = await executeToolCall(
    new Map([[tool.name, tool]]),
    { id: 'c', name: tool.name, arguments: JSON.stringify(args) },
    signal,
  );
  return outcome.result;
}

describe("the offline model's reading of the scheduler's results", () => {
  it('reads a created fixed schedule and words when its prompts arrive, in its zone', async () => {
    // The state's clock: 08:00 in Toronto on Monday 1 June.
    const state = testHabitState();
    const created = createdScheduleIn(await scheduler(state, { action: 'create', type: 'fixed', fixed_time: '12:30' }));
    expect(created).toEqual({
      id: state.schedules[0]!.id,
      when: 'at 12:30',
      fixedTime: '12:30',
      timezone: 'America/Toronto',
      prepMinutes: 10,
      next: new Date('2026-06-01T16:20:00Z'),
    });
    expect(deliveryText(created!, 'first')).toBe(
      'every day at 12:30 (America/Toronto); ' +
        'each arrives 10 minutes ahead, so the first comes at 12:20 on Monday 1 June',
    );
  });

  it('says nothing of "ahead" without prep time, and names the next day when today has passed', async () => {
    const state = testHabitState();
    const created = createdScheduleIn(
      await scheduler(state, { action: 'create', type: 'fixed', fixed_time: '07:00' }, 0),
    );
    expect(deliveryText(created!, 'next')).toBe(
      'every day at 07:00 (America/Toronto); the next comes at 07:00 on Tuesday 2 June',
    );
  });

  it('reads listed fixed and random schedules, and deletions', async () => {
    const state = testHabitState();
    await scheduler(state, { action: 'create', type: 'fixed', fixed_time: '08:00' });
    await scheduler(state, {
      action: 'create',
      type: 'random',
      random_start_time: '09:00',
      random_end_time: '11:00',
      timezone: 'UTC',
    });
    const [fixed, random] = state.schedules;
    const listed = listedSchedulesIn(await scheduler(state, { action: 'list' }));
    expect(listed).toEqual([
      { id: fixed!.id, when: 'at 08:00', fixedTime: '08:00', timezone: 'America/Toronto' },
      { id: random!.id, when: 'at a random time between 09:00 and 11:00', fixedTime: null, timezone: 'UTC' },
    ]);
    expect(listed.map(timeOf)).toEqual(['08:00', 'a random time between 09:00 and 11:00']);
    expect(deletedScheduleIdsIn(await scheduler(state, { action: 'delete', schedule_id: fixed!.id }))).toEqual([
      fixed!.id,
    ]);
    expect(listedSchedulesIn('No active schedules.')).toEqual([]);
  });

  it('finds no created schedule in a refusal', async () => {
    const state = testHabitState();
    await scheduler(state, { action: 'create', type: 'fixed', fixed_time: '08:00' });
    const refused = await scheduler(state, { action: 'create', type: 'fixed', fixed_time: '08:00' });
    expect(refused).toMatch(/^Error: an identical schedule already exists/);
    expect(createdScheduleIn(refused)).toBeNull();
  });
});
