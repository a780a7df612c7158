import { z } from 'zod';
import type { IdGenerator } from '../../core/clock.ts';
import type { NewTimer } from '../../core/timer.ts';
import { timerKeys } from '../../flows/habit-coach/timers/habit-timer-deps.ts';
import { goInstant, goJson, problemsIn, readAll, readGo, type GoRead, type GoValueProblem } from './go-json.ts';
import type { GoJobRow } from './read-go-study.ts';

const REMINDER = 'daily_prompt_reminder';

/** A `daily_prompt_reminder` job's payload (fixture README §2.3). */
const reminderPayload = z.object({ participant_id: z.string(), expected_sent_at: goInstant });

/** A queued Go reminder, checked: when it is due, and when the prompt it follows up went out. */
export interface GoReminder {
  dueAt: Date;
  promptSentAt: Date;
}

/**
 * Go's queued reminders by the participant they are for: the one their payload names, or, when
 * the payload cannot be read, the one their dedupe key (`daily_prompt_reminder:<id>`) names, so a
 * damaged payload is that participant's problem. `unowned`: reminders naming no one either way.
 * Other kinds (auto-feedback, state transitions) are not imported.
 */
export function remindersByParticipant(jobs: readonly GoJobRow[]): {
  byParticipant: Map<string, GoJobRow[]>;
  unowned: GoJobRow[];
} {
  const byParticipant = new Map<string, GoJobRow[]>();
  const unowned: GoJobRow[] = [];
  for (const job of jobs) {
    if (job.kind !== REMINDER) continue;
    const owner = ownerOf(job);
    if (!owner) unowned.push(job);
    else byParticipant.set(owner, [...(byParticipant.get(owner) ?? []), job]);
  }
  return { byParticipant, unowned };
}

function ownerOf(job: GoJobRow): string | undefined {
  const read = readGo(goJson(z.object({ participant_id: z.string() })), job.payload_json ?? '', 'jobs.payload_json');
  if ('value' in read && read.value) return read.value.participant_id;
  const prefix = `${REMINDER}:`;
  return job.dedupe_key?.startsWith(prefix) ? job.dedupe_key.slice(prefix.length) || undefined : undefined;
}

/** A reminder naming no participant: what is wrong with it, and that its dedupe key names no one either. */
export function unownedReminderProblems(job: GoJobRow): GoValueProblem[] {
  const read = readReminder(job);
  return [
    ...('problems' in read ? read.problems : []),
    { field: 'jobs.dedupe_key', message: `job ${job.id}: names no participant (${JSON.stringify(job.dedupe_key)})` },
  ];
}

/** One participant's queued reminders, each checked (its `run_at`, its payload). */
export function readReminders(jobs: readonly GoJobRow[]): GoRead<GoReminder[]> {
  return readAll(jobs.map(readReminder));
}

function readReminder(job: GoJobRow): GoRead<GoReminder> {
  const row = `job ${job.id}`;
  const dueAt = readGo(goInstant, job.run_at, 'jobs.run_at', row);
  const payload = readGo(goJson(reminderPayload), job.payload_json ?? '', 'jobs.payload_json', row);
  if ('problems' in dueAt || 'problems' in payload) return { problems: problemsIn(dueAt, payload) };
  if (!payload.value) return { problems: [{ field: 'jobs.payload_json', message: `${row}: is empty` }] };
  return { value: { dueAt: dueAt.value, promptSentAt: payload.value.expected_sent_at } };
}

/** A queued Go reminder still to come becomes ours; one already due was Go's to send. */
export function reminderTimers(
  reminders: readonly GoReminder[],
  target: { conversationId: string; participantId: string },
  options: { ids: IdGenerator; now: Date },
): NewTimer[] {
  return reminders
    .filter((reminder) => reminder.dueAt > options.now)
    .map((reminder) => ({
      id: options.ids.next('tmr'),
      kind: 'reminder',
      conversationId: target.conversationId,
      participantId: target.participantId,
      dedupKey: timerKeys.reminder(target.participantId),
      dueAt: reminder.dueAt,
      payload: { promptSentAt: reminder.promptSentAt.toISOString() },
      createdAt: options.now,
    }));
}
