import { DateTime } from 'luxon';
import type { GoSchedule } from './go-schemas.ts';

/** Enough days to reach the next 29 February from any date (2096 → 2104 skips 2100). */
const SEARCH_DAYS = 8 * 366 + 1;

/**
 * The first time after `after` that `schedule` names, in `zone`: a day whose month, day and
 * weekday match (each left out matches any), at its hour and minute (left out: 0), as the Go
 * server's timer read it: at most one send a day. Unlike Go, today counts when the time is still
 * ahead. Null when no date ever matches (31 April).
 */
export function nextRun(schedule: GoSchedule, zone: string, after: Date): Date | null {
  let day = DateTime.fromJSDate(after, { zone }).startOf('day');
  for (let index = 0; index < SEARCH_DAYS; index += 1, day = day.plus({ days: 1 })) {
    if (schedule.month !== undefined && day.month !== schedule.month) continue;
    if (schedule.day !== undefined && day.day !== schedule.day) continue;
    if (schedule.weekday !== undefined && day.weekday % 7 !== schedule.weekday) continue;
    const at = day.set({ hour: schedule.hour ?? 0, minute: schedule.minute ?? 0 }).toJSDate();
    if (at.getTime() > after.getTime()) return at;
  }
  return null;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Go's `Schedule.String()`: `schedule([minute=0 hour=9])`, or `every minute` for an empty one. */
export function describeGoSchedule(schedule: GoSchedule): string {
  const parts = [
    schedule.minute !== undefined && `minute=${schedule.minute}`,
    schedule.hour !== undefined && `hour=${schedule.hour}`,
    schedule.day !== undefined && `day=${schedule.day}`,
    schedule.month !== undefined && `month=${schedule.month}`,
    schedule.weekday !== undefined && `weekday=${WEEKDAYS[schedule.weekday]}`,
  ].filter(Boolean);
  return parts.length === 0 ? 'every minute' : `schedule([${parts.join(' ')}])`;
}

/** Go's `time.Duration.String()` for a non-negative span in ms: `0s`, `250ms`, `1.5s`, `5m0s`, `26h3m0s`. */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = ((total % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  return `${hours > 0 ? `${hours}h` : ''}${hours > 0 || minutes > 0 ? `${minutes}m` : ''}${seconds}s`;
}
