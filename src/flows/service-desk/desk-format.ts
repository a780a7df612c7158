import { DateTime } from 'luxon';

/**
 * How the service desk writes money, dates and times for a caller (issue #22): in one locale
 * (`DESK_LOCALE`) and the desk's zone (`DESK_TIME_ZONE`). Every caller-facing text the desk builds
 * (narration facts, confirmations, options listed, bills, the `resync` view) goes through this;
 * what the model gets as tool arguments and results (ids, ISO dates) does not.
 *
 * Appointment dates and windows are local to the desk's zone (`2026-06-04`, `09:00`): they are
 * read there and said there, so a date across a DST change keeps its wall-clock times. Spaces are
 * plain (no narrow or no-break spaces): the text goes through a model and to speech.
 */
export interface DeskFormat {
  readonly locale: string;
  readonly timeZone: string;
  /** An amount in hundredths (`amountCents`) of an ISO 4217 currency: "$129.00", "129,00 $". */
  money(cents: number, currency: string): string;
  /** A local date (YYYY-MM-DD): "Thursday, June 4", "Donnerstag, 4. Juni", "Thursday 4 June". */
  date(date: string): string;
  /** A local time (HH:MM) on a date: "9:00 AM", "09:00". */
  time(date: string, time: string): string;
  /**
   * A window on a date, its day period said once when both ends share it: "9:00–11:00 AM",
   * "11:00 AM–1:00 PM", "09:00–11:00".
   */
  window(date: string, start: string, end: string): string;
  /** A window with its date: "Thursday, June 4, 9:00–11:00 AM". */
  when(date: string, start: string, end: string): string;
}

type Part = Intl.DateTimeFormatPart;

const plain = (text: string) => text.replace(/[\u00a0\u202f\u2009]/g, ' ');

/**
 * The desk's formatter for a BCP 47 locale and an IANA zone, both already checked (the config
 * does: `DESK_LOCALE`, `DESK_TIME_ZONE`). A date or time that is not one is said as it is given.
 */
export function deskFormat(locale: string, timeZone: string): DeskFormat {
  const dates = new Intl.DateTimeFormat(locale, { weekday: 'long', month: 'long', day: 'numeric', timeZone });
  // A 12-hour locale says "9:00 AM"; a 24-hour one "09:00" (German, British English).
  const { hourCycle } = new Intl.DateTimeFormat(locale, { hour: 'numeric', timeZone }).resolvedOptions();
  const twelveHour = hourCycle === 'h11' || hourCycle === 'h12';
  const times = new Intl.DateTimeFormat(locale, {
    hour: twelveHour ? 'numeric' : '2-digit',
    minute: '2-digit',
    timeZone,
  });
  const moneys = new Map<string, Intl.NumberFormat>();
  const at = (date: string, time: string) => {
    const local = DateTime.fromISO(`${date}T${time}`, { zone: timeZone });
    return local.isValid ? local.toJSDate() : null;
  };
  const timeParts = (date: string, time: string): Part[] | null => {
    const instant = at(date, time);
    return instant ? times.formatToParts(instant) : null;
  };
  const format: DeskFormat = {
    locale,
    timeZone,
    money(cents, currency) {
      let numbers = moneys.get(currency);
      if (!numbers) {
        numbers = new Intl.NumberFormat(locale, { style: 'currency', currency });
        moneys.set(currency, numbers);
      }
      return plain(numbers.format(cents / 100));
    },
    date(date) {
      // Midday: the date's weekday and day wherever its midnight falls.
      const instant = at(date, '12:00');
      return instant ? plain(dates.format(instant)) : date;
    },
    time(date, time) {
      const parts = timeParts(date, time);
      return parts ? joined(parts) : time;
    },
    window(date, start, end) {
      const from = timeParts(date, start);
      const to = timeParts(date, end);
      if (!from || !to) return `${start}–${end}`;
      const [first, last] = periodOnce(from, to);
      return `${joined(first)}–${joined(last)}`;
    },
    when(date, start, end) {
      return `${format.date(date)}, ${format.window(date, start, end)}`;
    },
  };
  return format;
}

const joined = (parts: Part[]) => plain(parts.map((part) => part.value).join(''));

/**
 * A window's ends with a day period they share said once: after the end ("9:00–11:00 AM", the
 * start losing it and the space that set it off), or where a locale puts it first ("오전 9:00"),
 * before the start.
 */
function periodOnce(from: Part[], to: Part[]): [Part[], Part[]] {
  const period = (parts: Part[]) => parts.findIndex((part) => part.type === 'dayPeriod');
  const [fromAt, toAt] = [period(from), period(to)];
  if (fromAt < 0 || toAt < 0 || from[fromAt]!.value !== to[toAt]!.value) return [from, to];
  if (fromAt === 0) return [from, without(to, toAt, to[toAt + 1]?.type === 'literal' ? toAt + 1 : toAt)];
  return [without(from, from[fromAt - 1]?.type === 'literal' ? fromAt - 1 : fromAt, fromAt), to];
}

/** The parts but those from `first` to `last`, both included. */
const without = (parts: Part[], first: number, last: number) => [...parts.slice(0, first), ...parts.slice(last + 1)];
