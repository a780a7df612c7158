import { DateTime } from 'luxon';
import { AppError } from '../../core/errors.ts';

/**
 * The time window of a study export: rows whose time is at or after `from` and before `until`
 * (either end open when null). Participants are not filtered by it.
 */
export interface ExportPeriod {
  from: Date | null;
  /** Exclusive: a `to` instant plus 1 ms, or the start of the day after a `to` date. */
  until: Date | null;
}

export const NO_PERIOD: ExportPeriod = { from: null, until: null };

export const PERIOD_FORMAT =
  'an ISO 8601 time with its offset (2026-06-01T09:00:00-04:00, 2026-06-01T13:00:00Z) or a date (2026-06-01), ' +
  'a day in STUDY_TIMEZONE';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
// Seconds and fractions optional; the offset is required: a time without one means nothing in particular.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

/**
 * Reads `from` and `to` (both optional) as the export's window. A date is a whole day in
 * `timeZone` (`from` its start, `to` its end); an instant is taken as it is, `to` included.
 * Throws `invalid_request` naming the field: `from` or `to` when one cannot be read, `to` when
 * it comes before `from`.
 */
export function exportPeriod(from: string | undefined, to: string | undefined, timeZone: string): ExportPeriod {
  const start = from === undefined ? null : boundary('from', from, timeZone);
  const end = to === undefined ? null : boundary('to', to, timeZone);
  const until = end && (end.date ? end.at.plus({ days: 1 }).startOf('day') : end.at.plus({ milliseconds: 1 }));
  if (start && until && start.at.toMillis() >= until.toMillis())
    throw new AppError('invalid_request', `to: ${to} is before from (${from})`, { field: 'to' });
  return { from: start?.at.toJSDate() ?? null, until: until?.toJSDate() ?? null };
}

/** True when `at` falls in the window. */
export function inPeriod(period: ExportPeriod, at: Date): boolean {
  const ms = at.getTime();
  return (
    (period.from === null || ms >= period.from.getTime()) && (period.until === null || ms < period.until.getTime())
  );
}

function boundary(field: 'from' | 'to', raw: string, timeZone: string): { at: DateTime; date: boolean } {
  // An unencoded `+` in a URL's query arrives as a space; before an offset it can only have been a `+`.
  const value = raw.trim().replace(/(?<=T[\d:.]+) (?=\d{2}(?::?\d{2})?$)/i, '+');
  const date = DATE.test(value);
  const at = date
    ? DateTime.fromISO(value, { zone: timeZone }).startOf('day')
    : INSTANT.test(value)
      ? DateTime.fromISO(value, { setZone: true })
      : undefined;
  if (!at?.isValid) {
    const hint = INSTANT.test(`${value}Z`) ? ' (this time has no offset: add Z or ±hh:mm)' : '';
    throw new AppError('invalid_request', `${field}: "${raw}" is not ${PERIOD_FORMAT}${hint}`, { field });
  }
  return { at, date };
}
