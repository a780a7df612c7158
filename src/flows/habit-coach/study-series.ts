import { DateTime } from 'luxon';
import { isOpen, type PromptOutcome } from './adherence.ts';

/** What the per-day views read of one participant. */
export interface SeriesSubject {
  enrolledAt: Date;
  outcomes: readonly PromptOutcome[];
  /** When each of the participant's own messages arrived. */
  replies: readonly Date[];
}

/** One calendar day of the study, in its reporting zone. */
export interface SeriesDay {
  date: string;
  /** Participants enrolled by the end of the day (among those still in the study). */
  enrolled: number;
  prompts_sent: number;
  /** Of that day's prompts: how many got a reply within 24 h (before the next prompt). */
  prompts_replied: number;
  /** Of that day's prompts: how many were answered Done. */
  done: number;
  /** Of that day's prompts: how many still wait for a reply (under 24 h old); left out of the rates. */
  prompts_open: number;
  /** Messages participants sent that day. */
  replies: number;
  /** Participants who sent at least one message that day. */
  active_participants: number;
  /** Replied / (sent − open); null when no prompt of the day is settled. */
  response_rate: number | null;
  /** Done / (sent − open). */
  done_rate: number | null;
}

/** `pending`: prompted, no reply yet, and the prompt is still open (under 24 h). */
export type CalendarStatus = 'done' | 'replied' | 'pending' | 'no_reply' | 'no_prompt';

/** One day of a participant's adherence calendar, in their own zone. */
export interface CalendarDay {
  date: string;
  status: CalendarStatus;
  prompts: number;
  done: number;
  replies: number;
}

export const localDay = (at: Date, zone: string): string => DateTime.fromJSDate(at, { zone }).toISODate()!;

/** Every date from `from`'s day to `to`'s day in `zone`, inclusive. */
export function daysBetween(from: Date, to: Date, zone: string): string[] {
  const last = localDay(to, zone);
  const days: string[] = [];
  for (let day = DateTime.fromJSDate(from, { zone }).startOf('day'); ; day = day.plus({ days: 1 })) {
    const date = day.toISODate()!;
    if (date > last) return days;
    days.push(date);
  }
}

/**
 * The study per day in `zone`, from the first enrolment to today: prompts sent, replied, done and
 * still open (counted on the day the prompt was sent, so a rate never passes 1), messages received
 * and participants active (counted on the day they wrote).
 */
export function dailySeries(subjects: readonly SeriesSubject[], zone: string, now: Date): SeriesDay[] {
  if (subjects.length === 0) return [];
  const first = new Date(Math.min(...subjects.map((subject) => subject.enrolledAt.getTime())));
  const days = new Map(daysBetween(first, now, zone).map((date) => [date, emptyDay(date)]));
  const dayOf = (at: Date) => days.get(localDay(at, zone));
  for (const subject of subjects) {
    const enrolledOn = localDay(subject.enrolledAt, zone);
    for (const day of days.values()) if (day.date >= enrolledOn) day.enrolled += 1;
    for (const outcome of subject.outcomes) {
      const day = dayOf(outcome.sentAt);
      if (!day) continue;
      day.prompts_sent += 1;
      if (outcome.repliedAt) day.prompts_replied += 1;
      if (outcome.done) day.done += 1;
      if (isOpen(outcome, now)) day.prompts_open += 1;
    }
    const activeOn = new Set<string>();
    for (const reply of subject.replies) {
      const day = dayOf(reply);
      if (!day) continue;
      day.replies += 1;
      activeOn.add(day.date);
    }
    for (const date of activeOn) days.get(date)!.active_participants += 1;
  }
  return [...days.values()].map((day) => ({
    ...day,
    response_rate: rate(day.prompts_replied, day.prompts_sent - day.prompts_open),
    done_rate: rate(day.done, day.prompts_sent - day.prompts_open),
  }));
}

/** One participant's days from enrolment to today in their zone: done, replied, pending, no reply or no prompt. */
export function adherenceCalendar(subject: SeriesSubject, zone: string, now: Date): CalendarDay[] {
  const days = new Map(
    daysBetween(subject.enrolledAt, now, zone).map((date) => [
      date,
      { date, prompts: 0, replied: 0, open: 0, done: 0, replies: 0 },
    ]),
  );
  for (const outcome of subject.outcomes) {
    const day = days.get(localDay(outcome.sentAt, zone));
    if (!day) continue;
    day.prompts += 1;
    if (outcome.repliedAt) day.replied += 1;
    else if (isOpen(outcome, now)) day.open += 1;
    if (outcome.done) day.done += 1;
  }
  for (const reply of subject.replies) {
    const day = days.get(localDay(reply, zone));
    if (day) day.replies += 1;
  }
  return [...days.values()].map(({ replied, open, ...day }) => ({ ...day, status: statusOf(day, replied, open) }));
}

function statusOf(day: { prompts: number; done: number }, replied: number, open: number): CalendarStatus {
  if (day.done > 0) return 'done';
  if (replied > 0) return 'replied';
  if (open > 0) return 'pending';
  return day.prompts > 0 ? 'no_reply' : 'no_prompt';
}

const emptyDay = (date: string) => ({
  date,
  enrolled: 0,
  prompts_sent: 0,
  prompts_replied: 0,
  done: 0,
  prompts_open: 0,
  replies: 0,
  active_participants: 0,
});

export const rate = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 1000) / 1000);
