import type { Message } from '../../core/domain.ts';
import { currentStreak, isOpen, promptOutcomes, type PromptOutcome } from './adherence.ts';
import type { StudyRow } from './study-queries.ts';
import { dailySeries, rate, type SeriesSubject } from './study-series.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const RECENT_DAYS = 7;

export type StudyFlag = 'no_reply_48h' | 'delivery_failing' | 'opted_out' | 'paused' | 'intake_incomplete_24h';

/** Who is read, when, and in which zone the series' days are counted. */
export interface OverviewInput {
  rows: readonly StudyRow[];
  /** Participant id → their messages and the polls sent to them, in seq order. */
  transcripts: ReadonlyMap<string, readonly Message[]>;
  timeZone: string;
  now: Date;
}

/**
 * What a coordinator reads per participant, the study's totals and its per-day series: plain
 * numbers a test can count by hand.
 */
export function studyOverview({ rows, transcripts, timeZone, now }: OverviewInput) {
  const subjects = rows.map((row) => subjectOf(row, transcripts.get(row.id) ?? []));
  // The prompts no longer open (answered, replied to, or a day old): what the rates divide by.
  const settled = subjects.map((subject) => subject.outcomes.filter((outcome) => !isOpen(outcome, now)));
  const participants = rows.map((row, index) => participantOverview(row, subjects[index]!, settled[index]!, now));
  const totals = {
    participants: participants.length,
    by_status: countBy(participants.map((participant) => participant.status)),
    by_cohort: countBy(participants.map((participant) => participant.cohort ?? '')),
    prompts_sent: sum(participants.map((participant) => participant.prompts_sent)),
    done_count: sum(participants.map((participant) => participant.done_count)),
    flagged: countBy(participants.flatMap((participant) => participant.flags)),
  };
  return {
    generated_at: now.toISOString(),
    recent_days: RECENT_DAYS,
    time_zone: timeZone,
    totals: { ...totals, done_rate: rate(totals.done_count, sum(settled.map((list) => list.length))) },
    participants,
    series: dailySeries(subjects, timeZone, now),
  };
}

function subjectOf(row: StudyRow, transcript: readonly Message[]): SeriesSubject {
  return {
    enrolledAt: row.enrolledAt,
    outcomes: promptOutcomes(transcript),
    replies: transcript.filter((message) => message.role === 'user').map((message) => message.createdAt),
  };
}

function participantOverview(row: StudyRow, subject: SeriesSubject, settled: readonly PromptOutcome[], now: Date) {
  return {
    id: row.id,
    name: row.name,
    phone_number: row.phoneNumber,
    timezone: row.timezone,
    status: row.status,
    cohort: row.cohort,
    sub_state: row.subState,
    enrolled_at: row.enrolledAt.toISOString(),
    days_enrolled: Math.floor((now.getTime() - row.enrolledAt.getTime()) / DAY_MS),
    ...doneCounts(subject.outcomes, settled),
    last_prompt_at: row.lastPromptAt?.toISOString() ?? null,
    last_reply_at: row.lastReplyAt?.toISOString() ?? null,
    replies_recent: row.recentReplies,
    ...responseRates(settled, now),
    current_streak: currentStreak(subject.outcomes, now),
    flags: flagsOf(row, now),
  };
}

/**
 * The daily prompts in the transcript, and how many were answered Done: the same prompts the
 * response rates read, so the rate never passes 1 (a Done to the poll of a `POST /send` or
 * `POST /schedule` prompt counts in the coach's profile, not here). A prompt still open is sent
 * but not yet in the rate.
 */
function doneCounts(outcomes: readonly PromptOutcome[], settled: readonly PromptOutcome[]) {
  const done = outcomes.filter((outcome) => outcome.done).length;
  return { prompts_sent: outcomes.length, done_count: done, done_rate: rate(done, settled.length) };
}

/**
 * Of the daily prompts no longer open (all, and those of the last 7 days): the share that got a
 * reply.
 */
function responseRates(outcomes: readonly PromptOutcome[], now: Date) {
  const since = now.getTime() - RECENT_DAYS * DAY_MS;
  const recent = outcomes.filter((outcome) => outcome.sentAt.getTime() >= since);
  const replied = (list: readonly PromptOutcome[]) => list.filter((outcome) => outcome.repliedAt).length;
  return {
    response_rate: rate(replied(outcomes), outcomes.length),
    response_rate_recent: rate(replied(recent), recent.length),
  };
}

/** Who needs a coordinator's look, and why. */
function flagsOf(row: StudyRow, now: Date): StudyFlag[] {
  const flags: StudyFlag[] = [];
  const since = (date: Date | null) => (date ? now.getTime() - date.getTime() : Infinity);
  // Silent for two days, counted from enrolment for someone who never wrote.
  if (row.status === 'active' && Math.min(since(row.lastReplyAt), since(row.enrolledAt)) >= 48 * HOUR_MS)
    flags.push('no_reply_48h');
  if (row.recentFailedDeliveries > 0) flags.push('delivery_failing');
  // They sent STOP (or the provider says they unsubscribed): nothing reaches them until they send START.
  if (row.optedOut) flags.push('opted_out');
  if (row.status === 'paused') flags.push('paused');
  if (row.status === 'active' && row.subState === 'INTAKE' && since(row.enrolledAt) >= DAY_MS)
    flags.push('intake_incomplete_24h');
  return flags;
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const countBy = (values: readonly string[]) =>
  Object.fromEntries([...new Set(values)].map((value) => [value, values.filter((other) => other === value).length]));
