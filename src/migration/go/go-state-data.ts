import { z } from 'zod';
import { INTENSITIES, PROFILE_TEXT_FIELDS, type ProfileTextField } from '../../core/profile.ts';
import type { ScheduleKind } from '../../core/schedule.ts';
import { canonicalTimeZone } from '../../core/time-zone.ts';
import { formatClockTime, parseClockTime } from '../../timers/schedule-math.ts';
import { goInstant, goJson, goOptionalInstant, readGo, type GoRead, type GoValueProblem } from './go-json.ts';

/**
 * The shapes of a Go participant's `flow_states.state_data` (fixture README §2.2, §3): the values
 * the import uses are read strictly, so a value Go could not have written is a problem, never an
 * empty import; Go's other keys and fields are left as they are.
 */

/** `flow.ConversationHistory` (§3.1): Go stamps every message it keeps. */
const history = z.object({
  messages: z
    .array(z.object({ role: z.enum(['user', 'assistant', 'system']), content: z.string(), timestamp: goInstant }))
    .nullable()
    .optional(),
});

const profileText = Object.fromEntries(PROFILE_TEXT_FIELDS.map((field) => [field, z.string().optional()])) as Record<
  ProfileTextField,
  z.ZodOptional<z.ZodString>
>;
const count = z.int().min(0, 'must be a count, 0 or more');

/** `flow.UserProfile` (§3.2). Go's `''` intensity (a profile its scheduler created) is `normal` here. */
const profile = z.object({
  ...profileText,
  intensity: z.literal(['', ...INTENSITIES]).optional(),
  success_count: count.optional(),
  total_prompts: count.optional(),
  created_at: goOptionalInstant.optional(),
  updated_at: goOptionalInstant.optional(),
  tone: z
    .object({
      tone_tags: z.array(z.string()).nullable().optional(),
      tone_scores: z.record(z.string(), z.number()).nullable().optional(),
      tone_last_updated_at: goOptionalInstant.optional(),
    })
    .optional(),
});

/** A schedule's times as ours: `HH:MM`, a window's end after its start (Go's scheduler tool refused the rest). */
type ScheduleTimes = {
  kind: ScheduleKind;
  fixedTime: string | null;
  windowStart: string | null;
  windowEnd: string | null;
};

/** `models.ScheduleInfo` (§3.4) as our schedule's times and zone, each problem naming the Go schedule. */
const schedule = z
  .object({
    id: z.string().optional(),
    type: z.string(),
    fixed_time: z.string().optional(),
    random_start_time: z.string().optional(),
    random_end_time: z.string().optional(),
    timezone: z.string().optional(),
    created_at: goOptionalInstant.optional(),
  })
  .transform((goSchedule, ctx) => {
    const name = `schedule ${goSchedule.id ?? '(no id)'}`;
    const times = scheduleTimes(goSchedule);
    if ('field' in times) ctx.addIssue({ code: 'custom', path: [times.field], message: `${name}: ${times.message}` });
    // No zone: Go filled in its default when it created the schedule; here it is the participant's, else UTC.
    const timezone = goSchedule.timezone ? canonicalTimeZone(goSchedule.timezone) : null;
    if (goSchedule.timezone && !timezone) {
      const message = `${name}: ${JSON.stringify(goSchedule.timezone)} is not an IANA time zone`;
      ctx.addIssue({ code: 'custom', path: ['timezone'], message });
    }
    if ('field' in times || (goSchedule.timezone && !timezone)) return z.NEVER;
    return { goId: goSchedule.id, ...times, timezone, createdAt: goSchedule.created_at ?? null };
  });

function scheduleTimes(goSchedule: {
  type: string;
  fixed_time?: string;
  random_start_time?: string;
  random_end_time?: string;
}): ScheduleTimes | GoValueProblem {
  if (goSchedule.type === 'fixed') {
    const fixed = clockTime(goSchedule.fixed_time, 'fixed_time');
    return 'field' in fixed ? fixed : { kind: 'fixed', fixedTime: fixed.time, windowStart: null, windowEnd: null };
  }
  if (goSchedule.type !== 'random')
    return {
      field: 'type',
      message: `unknown type ${JSON.stringify(goSchedule.type)} (Go's are "fixed" and "random")`,
    };
  const start = clockTime(goSchedule.random_start_time, 'random_start_time');
  if ('field' in start) return start;
  const end = clockTime(goSchedule.random_end_time, 'random_end_time');
  if ('field' in end) return end;
  if (end.minute <= start.minute)
    return { field: 'random_end_time', message: `"${end.time}" is not after random_start_time "${start.time}"` };
  return { kind: 'random', fixedTime: null, windowStart: start.time, windowEnd: end.time };
}

function clockTime(value: string | undefined, field: string): { minute: number; time: string } | GoValueProblem {
  if (!value) return { field, message: 'is missing' };
  const minute = parseClockTime(value);
  if (minute === null) return { field, message: `${JSON.stringify(value)} is not an HH:MM time (24-hour)` };
  return { minute, time: formatClockTime(minute) };
}

/** `map[DataKey]string`: every value a string, some of them JSON again (encoded twice, §1.2). */
const stateData = z.record(z.string(), z.string()).pipe(
  z.object({
    conversationState: z.string().optional(),
    conversationHistory: goJson(history).optional(),
    userProfile: goJson(profile).optional(),
    scheduleRegistry: goJson(z.array(schedule)).optional(),
    lastHabitPrompt: z.string().optional(),
    lastPromptSentAt: goOptionalInstant.optional(),
  }),
);

export type GoState = z.output<typeof stateData>;
export type GoHistoryMessage = NonNullable<NonNullable<GoState['conversationHistory']>['messages']>[number];
export type GoProfile = NonNullable<GoState['userProfile']>;
export type GoSchedule = NonNullable<GoState['scheduleRegistry']>[number];

/**
 * A participant's `flow_states.state_data`, decoded with the values in it that hold JSON; every
 * problem is named by its path (`flow_states.state_data.userProfile.success_count`). No row,
 * `''` (SQLite) and NULL (PostgreSQL) are Go's empty map.
 */
export function readStateData(text: string | null): GoRead<GoState> {
  const read = readGo(goJson(stateData), text ?? '', 'flow_states.state_data');
  return 'problems' in read ? read : { value: read.value ?? {} };
}
