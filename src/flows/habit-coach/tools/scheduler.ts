import { z } from 'zod';
import type { IdGenerator } from '../../../core/clock.ts';
import { canonicalTimeZone } from '../../../core/time-zone.ts';
import type { Schedule } from '../../../core/schedule.ts';
import { defineTool, toolError, type ToolOutcome } from '../../../tools/define-tool.ts';
import { describeSchedule, nextFireTime, parseClockTime } from '../../../timers/schedule-math.ts';
import type { HabitTurnState } from '../habit-turn-state.ts';

export const schedulerInput = z.object({
  action: z.enum(['create', 'list', 'delete']),
  type: z
    .enum(['fixed', 'random'])
    .optional()
    .describe('For create: a fixed daily time, or a random time in a window each day.'),
  fixed_time: z.string().max(10).optional().describe('For fixed: HH:MM, 24-hour, e.g. "08:00".'),
  random_start_time: z.string().max(10).optional().describe('For random: window start, HH:MM.'),
  random_end_time: z.string().max(10).optional().describe('For random: window end, HH:MM, after the start.'),
  timezone: z.string().max(64).optional().describe("IANA zone; defaults to the participant's."),
  schedule_id: z.string().max(100).optional().describe('For delete: the id from list or create.'),
});
type SchedulerInput = z.output<typeof schedulerInput>;

export interface SchedulerDeps {
  ids: IdGenerator;
  random: () => number;
  prepMinutes: number;
}

/** Creates, lists and deletes daily prompt schedules; they fire `prepMinutes` before the target time. */
export function schedulerTool(state: HabitTurnState, deps: SchedulerDeps) {
  return defineTool({
    name: 'scheduler',
    description:
      'Manage daily habit-prompt schedules: create (fixed HH:MM, or random within a window), list, ' +
      "or delete by schedule_id. Times are read in the participant's time zone unless timezone is given.",
    input: schedulerInput,
    execute: (input) => {
      switch (input.action) {
        case 'create':
          return createSchedule(state, deps, input);
        case 'list':
          return listSchedules(state);
        case 'delete':
          return deleteSchedule(state, input.schedule_id);
      }
    },
  });
}

function createSchedule(state: HabitTurnState, deps: SchedulerDeps, input: SchedulerInput): ToolOutcome | string {
  if (!input.type) return toolError('type is required to create a schedule: "fixed" or "random".');
  const given = input.timezone ?? state.participant.timezone ?? (input.type === 'fixed' ? 'America/Toronto' : 'UTC');
  const zone = canonicalTimeZone(given);
  if (!zone) return toolError(`timezone "${given}" is not an IANA time zone (e.g. America/Toronto).`);
  const times = input.type === 'fixed' ? fixedTimes(input) : windowTimes(input);
  if ('error' in times) return toolError(times.error);
  const schedule: Schedule = {
    id: deps.ids.next('sch'),
    participantId: state.participant.id,
    kind: input.type,
    ...times,
    timezone: zone,
    prepMinutes: deps.prepMinutes,
    createdAt: state.startedAt,
  };
  const duplicate = state.schedules.find((existing) => sameTiming(existing, schedule));
  if (duplicate)
    return toolError(
      `an identical schedule already exists (${duplicate.id}, ${describeSchedule(duplicate)}). Nothing was created.`,
    );
  state.schedules.push(schedule);
  state.createdSchedules.push(schedule);
  state.notes.push(`scheduler: created ${schedule.id}`);
  // The one draw for this firing: the turn's commit arms the timer for this very time.
  const next = nextFireTime(schedule, state.startedAt, deps.random);
  state.nextPromptAt.set(schedule.id, next);
  return (
    `Created schedule ${schedule.id}: ${describeSchedule(schedule)}. ` +
    `Prompts go out ${schedule.prepMinutes} minutes before the target time; the next one at ${next.toISOString()}.`
  );
}

type Times = { error: string } | Pick<Schedule, 'fixedTime' | 'windowStart' | 'windowEnd'>;

function fixedTimes(input: SchedulerInput): Times {
  if (!input.fixed_time)
    return { error: 'fixed_time is required for a fixed schedule (HH:MM, 24-hour, e.g. "08:00").' };
  if (parseClockTime(input.fixed_time) === null)
    return { error: `fixed_time "${input.fixed_time}" is not a valid HH:MM time (24-hour, e.g. "08:00").` };
  return { fixedTime: normalize(input.fixed_time), windowStart: null, windowEnd: null };
}

function windowTimes(input: SchedulerInput): Times {
  if (!input.random_start_time || !input.random_end_time) {
    return { error: 'random_start_time and random_end_time are both required for a random schedule (HH:MM, 24-hour).' };
  }
  const start = parseClockTime(input.random_start_time);
  const end = parseClockTime(input.random_end_time);
  if (start === null) return { error: `random_start_time "${input.random_start_time}" is not a valid HH:MM time.` };
  if (end === null) return { error: `random_end_time "${input.random_end_time}" is not a valid HH:MM time.` };
  if (end <= start)
    return {
      error: `random_end_time (${input.random_end_time}) must be after random_start_time (${input.random_start_time}).`,
    };
  return {
    fixedTime: null,
    windowStart: normalize(input.random_start_time),
    windowEnd: normalize(input.random_end_time),
  };
}

function normalize(time: string): string {
  const minutes = parseClockTime(time)!;
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

function sameTiming(a: Schedule, b: Schedule): boolean {
  return (
    a.kind === b.kind &&
    a.fixedTime === b.fixedTime &&
    a.windowStart === b.windowStart &&
    a.windowEnd === b.windowEnd &&
    a.timezone === b.timezone
  );
}

/** Each schedule with the time its armed timer sends the next prompt (never a fresh draw). */
function listSchedules(state: HabitTurnState): string {
  if (state.schedules.length === 0) return 'No active schedules.';
  const lines = state.schedules.map((schedule) => {
    const next = state.nextPromptAt.get(schedule.id);
    const when = next ? `next prompt at ${next.toISOString()}` : 'no prompt is pending';
    return `- ${schedule.id}: ${describeSchedule(schedule)}; ${when}`;
  });
  return `Active schedules:\n${lines.join('\n')}`;
}

function deleteSchedule(state: HabitTurnState, id: string | undefined): ToolOutcome | string {
  if (!id) return toolError('schedule_id is required to delete a schedule. Use action "list" to see the ids.');
  const index = state.schedules.findIndex((schedule) => schedule.id === id);
  if (index < 0) {
    const known = state.schedules.map((schedule) => schedule.id).join(', ') || 'none';
    return toolError(`unknown schedule_id "${id}". Active schedules: ${known}.`);
  }
  state.schedules.splice(index, 1);
  state.nextPromptAt.delete(id);
  const created = state.createdSchedules.findIndex((schedule) => schedule.id === id);
  if (created >= 0) state.createdSchedules.splice(created, 1);
  else state.deletedScheduleIds.push(id);
  state.notes.push(`scheduler: deleted ${id}`);
  return `Deleted schedule ${id}; its prompts will no longer be sent.`;
}
