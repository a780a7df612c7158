import { DateTime } from 'luxon';
import type { Schedule } from '../core/schedule.ts';

/** Minutes since midnight of an `HH:MM` (24-hour) time, or null when it is not one. */
export function parseClockTime(value: string): number | null {
  const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(value.trim());
  if (!match) return null;
  return Number(match[1]) * 60 + Number(match[2]);
}

export function formatClockTime(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * The instant a schedule's prompt goes out on the local calendar day `day` of its zone:
 * the target minute minus the prep time. A target inside a DST gap moves forward with the clock.
 */
export function fireTimeOnDay(day: DateTime, targetMinute: number, prepMinutes: number, zone: string): Date {
  const target = DateTime.fromObject(
    { year: day.year, month: day.month, day: day.day, hour: Math.floor(targetMinute / 60), minute: targetMinute % 60 },
    { zone },
  );
  return target.minus({ minutes: prepMinutes }).toJSDate();
}

/**
 * The schedule's next firing strictly after `after`, deciding "today or tomorrow" in the
 * schedule's own zone. `random` gives a number in [0, 1) for random windows. `notOnDayOf`
 * (the instant a firing was due) skips that local day: one prompt per schedule per day, even
 * when a random window still has room after today's prompt.
 */
export function nextFireTime(schedule: Schedule, after: Date, random: () => number, notOnDayOf?: Date): Date {
  const zone = schedule.timezone;
  let day = DateTime.fromJSDate(after, { zone }).startOf('day');
  if (notOnDayOf) {
    const dayAfter = DateTime.fromJSDate(notOnDayOf, { zone }).startOf('day').plus({ days: 1 });
    if (dayAfter > day) day = dayAfter;
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const fire = fireTimeOnDay(day, targetMinuteFor(schedule, random), schedule.prepMinutes, zone);
    if (fire.getTime() > after.getTime()) return fire;
    day = day.plus({ days: 1 });
  }
  throw new Error(`no fire time found for schedule ${schedule.id}`);
}

/**
 * The first instant, in `toZone`, of the calendar date `instant` has in `fromZone`: a firing
 * planned for "the 3rd" in one zone stays on the 3rd when the schedule moves to another.
 */
export function sameDateIn(instant: Date, fromZone: string, toZone: string): Date {
  const date = DateTime.fromJSDate(instant, { zone: fromZone }).toISODate()!;
  return DateTime.fromISO(date, { zone: toZone }).startOf('day').toJSDate();
}

/** The target minute of the day: the fixed time, or a uniformly random minute in the window. */
export function targetMinuteFor(
  schedule: Pick<Schedule, 'kind' | 'fixedTime' | 'windowStart' | 'windowEnd' | 'id'>,
  random: () => number,
): number {
  if (schedule.kind === 'fixed') return requireMinute(schedule.fixedTime, schedule.id);
  const start = requireMinute(schedule.windowStart, schedule.id);
  const end = requireMinute(schedule.windowEnd, schedule.id);
  return start + Math.floor(random() * (end - start + 1));
}

function requireMinute(value: string | null, id: string): number {
  const minute = value === null ? null : parseClockTime(value);
  if (minute === null) throw new Error(`schedule ${id} has no valid time`);
  return minute;
}

/** A human description, in the schedule's own zone: "every day at 08:00 (America/Toronto)". */
export function describeSchedule(schedule: Schedule): string {
  const when =
    schedule.kind === 'fixed'
      ? `at ${schedule.fixedTime}`
      : `at a random time between ${schedule.windowStart} and ${schedule.windowEnd}`;
  return `every day ${when} (${schedule.timezone})`;
}

/** The local calendar date (`YYYY-MM-DD`) of an instant in a zone. */
export function localDate(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toISODate() ?? '';
}
