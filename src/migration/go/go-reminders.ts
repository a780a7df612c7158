import { z } from 'zod';
import type { IdGenerator } from '../../core/clock.ts';
import type { NewMessage } from '../../core/domain.ts';
import type { NewTimer } from '../../core/timer.ts';
import { DONE_POLL_QUESTION, GO_DONE_OPTIONS } from '../../flows/habit-coach/polls.ts';
import { timerKeys } from '../../flows/habit-coach/timers/habit-timer-deps.ts';
import { goInstant, goJson, problemsIn, readAll, readGo, type GoRead, type GoValueProblem } from './go-json.ts';
import type { GoJobRow } from './read-go-study.ts';

const REMINDER = 'daily_prompt_reminder';

/** A `daily_prompt_reminder` job's payload (fixture README §2.3). */
const reminderPayload = z.object({ participant_id: z.string(), expected_sent_at: goInstant });

/** A Go reminder job, checked: when it is (or was) due, when its prompt went out, whether it still waits. */
export interface GoReminder {
  jobId: string;
  dueAt: Date;
  promptSentAt: Date;
  queued: boolean;
}

/**
 * Go's reminder jobs by the participant they are for: the one their payload names, or, when
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

/** One participant's reminder jobs, each checked (its `run_at`, its payload). */
export function readReminders(jobs: readonly GoJobRow[]): GoRead<GoReminder[]> {
  return readAll(jobs.map(readReminder));
}

function readReminder(job: GoJobRow): GoRead<GoReminder> {
  const row = `job ${job.id}`;
  const dueAt = readGo(goInstant, job.run_at, 'jobs.run_at', row);
  const payload = readGo(goJson(reminderPayload), job.payload_json ?? '', 'jobs.payload_json', row);
  if ('problems' in dueAt || 'problems' in payload) return { problems: problemsIn(dueAt, payload) };
  if (!payload.value) return { problems: [{ field: 'jobs.payload_json', message: `${row}: is empty` }] };
  const promptSentAt = payload.value.expected_sent_at;
  return { value: { jobId: job.id, dueAt: dueAt.value, promptSentAt, queued: job.status === 'queued' } };
}

/** A queued Go reminder still to come becomes ours; one already due was Go's to send. */
export function reminderTimers(
  reminders: readonly GoReminder[],
  target: { conversationId: string; participantId: string },
  options: { ids: IdGenerator; now: Date },
): NewTimer[] {
  return reminders
    .filter((reminder) => reminder.queued && reminder.dueAt > options.now)
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

/**
 * Each daily prompt Go sent, as the "Did you do it?" poll that went with it (Go's
 * `SendPromptWithButtons` sent the prompt and its poll in one call), at the time its reminder job
 * names: what the study overview and export count as a daily prompt, so an imported study's
 * prompts, replies and Done answers are counted as Go's own counters counted them. The poll has
 * Go's options, as Go's record of a vote names them (`Q: Did you do it? A: Next time`). The
 * prompt's text is not written: Go did not keep it (only the last one, `lastHabitPrompt`), and
 * its send is already a delivery without text. Oldest first (ties by job id, so both Go dialects
 * give one order).
 */
export function dailyPromptPolls(
  reminders: readonly GoReminder[],
  conversationId: string,
  ids: IdGenerator,
): NewMessage[] {
  return [...reminders]
    .sort((a, b) => a.promptSentAt.getTime() - b.promptSentAt.getTime() || (a.jobId < b.jobId ? -1 : 1))
    .map((reminder) => ({
      id: ids.next('msg'),
      conversationId,
      role: 'assistant' as const,
      kind: 'poll' as const,
      text: DONE_POLL_QUESTION,
      poll: { question: DONE_POLL_QUESTION, options: [...GO_DONE_OPTIONS] },
      source: 'timer' as const,
      turnId: null,
      createdAt: reminder.promptSentAt,
    }));
}
