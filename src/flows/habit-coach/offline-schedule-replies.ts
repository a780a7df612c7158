/**
 * How the offline demo model reads the scheduler tool's results and words what they did. Its
 * replies about times say only what a result reports, so the participant is never told a time
 * the system will not use (the timer is armed for the very "next one at" the result gives).
 */
import { DateTime } from 'luxon';

/** A schedule the scheduler tool reports, as `describeSchedule` words it: `when` is "at 12:30". */
export interface ReportedSchedule {
  id: string;
  when: string;
  fixedTime: string | null;
  timezone: string;
}

export interface CreatedSchedule extends ReportedSchedule {
  prepMinutes: number;
  /** When its first prompt goes out. */
  next: Date;
}

/** `describeSchedule`'s words: "every day at 08:00 (America/Toronto)", or a random window's. */
const DESCRIBED =
  String.raw`every day (at (?:(\d{2}:\d{2})|a random time between \d{2}:\d{2} and \d{2}:\d{2}))` +
  String.raw` \(([^)]+)\)`;
const CREATED = new RegExp(
  String.raw`Created schedule (\S+): ${DESCRIBED}\. Prompts go out (\d+) minutes before the target time; ` +
    String.raw`the next one at (\d{4}-\d{2}-\d{2}T[\d:.]+Z)`,
);
const LISTED = new RegExp(String.raw`^- (\S+): ${DESCRIBED};`, 'gm');

/** The schedule a "Created schedule" result reports, or null when there is none. */
export function createdScheduleIn(results: string): CreatedSchedule | null {
  const match = CREATED.exec(results);
  if (!match) return null;
  const [, id, when, fixedTime, timezone, prep, next] = match;
  return {
    id: id!,
    when: when!,
    fixedTime: fixedTime ?? null,
    timezone: timezone!,
    prepMinutes: Number(prep),
    next: new Date(next!),
  };
}

/** The schedules an "Active schedules:" result lists (none for "No active schedules."). */
export function listedSchedulesIn(results: string): ReportedSchedule[] {
  return [...results.matchAll(LISTED)].map(([, id, when, fixedTime, timezone]) => ({
    id: id!,
    when: when!,
    fixedTime: fixedTime ?? null,
    timezone: timezone!,
  }));
}

/** The ids a "Deleted schedule" result names. */
export function deletedScheduleIdsIn(results: string): string[] {
  return [...results.matchAll(/Deleted schedule (\S+?);/g)].map((match) => match[1]!);
}

/**
 * When a created schedule's prompts arrive, in its own zone: "every day at 12:30
 * (America/Toronto); each arrives 10 minutes ahead, so the first comes at 12:20 on Monday 1 June".
 */
export function deliveryText(schedule: CreatedSchedule, which: 'first' | 'next'): string {
  const next = DateTime.fromJSDate(schedule.next, { zone: schedule.timezone }).setLocale('en-GB');
  const ahead = schedule.prepMinutes > 0 ? `each arrives ${schedule.prepMinutes} minutes ahead, so ` : '';
  return (
    `every day ${schedule.when} (${schedule.timezone}); ` +
    `${ahead}the ${which} comes at ${next.toFormat('HH:mm')} on ${next.toFormat('cccc d LLLL')}`
  );
}

/** "12:30", or "a random time between 09:00 and 11:00": a reported schedule's time without its "at". */
export function timeOf(schedule: ReportedSchedule): string {
  return schedule.when.replace(/^at /, '');
}
