import type { IdGenerator } from '../../core/clock.ts';
import type { Conversation, NewMessage, Participant, ParticipantStatus } from '../../core/domain.ts';
import { PARTICIPANT_STATUSES } from '../../core/domain.ts';
import type { PhoneRegion } from '../../core/phone.ts';
import { emptyProfile, PROFILE_TEXT_FIELDS, type Profile } from '../../core/profile.ts';
import type { Schedule } from '../../core/schedule.ts';
import type { NewTimer } from '../../core/timer.ts';
import { dailyPromptTimer } from '../../flows/habit-coach/timers/daily-prompt-timer.ts';
import { problemsIn, type GoRead, type GoValueProblem } from './go-json.ts';
import { dailyPromptPolls, readReminders, reminderTimers, type GoReminder } from './go-reminders.ts';
import {
  readStateData,
  type GoHistoryMessage,
  type GoProfile,
  type GoSchedule,
  type GoState,
} from './go-state-data.ts';
import { goPhone, goTime, text } from './go-values.ts';
import {
  goDeliveries,
  mergeByTime,
  readGoRecords,
  type GoReceipt,
  type GoReceiptRow,
  type GoResponse,
  type GoResponseRow,
  type ImportedDelivery,
  withResponses,
} from './map-go-history.ts';
import type { GoJobRow, GoParticipantRow } from './read-go-study.ts';

/** Everything of one Go participant, as our rows. */
export interface ImportedParticipant {
  goId: string;
  participant: Participant;
  conversation: Conversation;
  /**
   * The transcript: Go's kept history, the responses it does not hold, and each daily prompt's
   * "Did you do it?" poll, in time order.
   */
  messages: NewMessage[];
  /**
   * Daily prompts: how many are in the transcript (one per Go reminder job), and how many Go's
   * profile counted (`total_prompts`). A prompt whose job Go did not keep cannot be shown.
   */
  dailyPrompts: { imported: number; goCounted: number };
  /** Every send Go recorded (its receipts), with WhatsApp's reports on it. */
  deliveries: ImportedDelivery[];
  profile: Profile;
  schedules: Schedule[];
  timers: NewTimer[];
}

/** A Go value that keeps its participant out of this run: the Go id, where the value is, what is wrong. */
export interface ImportProblem {
  goId: string;
  field: string;
  message: string;
}

/** A Go participant as ours, or every problem that keeps them out. */
export type MappedParticipant = ImportedParticipant | { problems: ImportProblem[] };

/** A Go participant's rows (their own; their flow state; their receipts, responses and reminder jobs). */
export interface GoParticipantRecords {
  /** Their `daily_prompt_reminder` jobs, of every status: one per daily prompt Go sent them. */
  jobs: readonly GoJobRow[];
  receipts: readonly GoReceiptRow[];
  responses: readonly GoResponseRow[];
}

/** Every Go value of one participant that the import uses, checked. */
interface GoParticipant {
  row: GoParticipantRow;
  phone: string;
  status: ParticipantStatus;
  enrolledAt: Date;
  state: GoState;
  receipts: GoReceipt[];
  responses: GoResponse[];
  reminders: GoReminder[];
}

export interface MapOptions {
  region: PhoneRegion | undefined;
  ids: IdGenerator;
  now: Date;
  prepMinutes: number;
  random: () => number;
  /** The channel imported participants are reached on (WhatsApp when the server has it). */
  channel: string;
}

/** Messages Go kept in the history that no person saw: the greeting hint, and intake's tool summaries. */
const NOT_SAID = /^<Hint: |^I've executed the following tools: /;

/**
 * One Go participant as ours: the facts, not the Go server's bugs (the fixture README names
 * them): no timezone is invented (the schedule's zone is the only one Go kept), schedules become
 * durable daily-prompt timers (Go's were in memory only), a paused or finished participant gets
 * no prompts, and reminders are re-armed only when still in the future. A value the import uses
 * that Go could not have written keeps the whole participant out, each such value named: nothing
 * of theirs is guessed at or left out unseen, and once it is fixed a second run brings them in whole.
 */
export function mapGoParticipant(
  row: GoParticipantRow,
  records: GoParticipantRecords,
  options: MapOptions,
): MappedParticipant {
  const read = readGoParticipant(row, records, options.region);
  if ('problems' in read) return { problems: read.problems.map((problem) => ({ goId: row.id, ...problem })) };
  return toImported(read.value, options);
}

/** Every value the import uses, checked; one problem for each that is wrong, so a dry run names them all. */
function readGoParticipant(
  row: GoParticipantRow,
  records: GoParticipantRecords,
  region: PhoneRegion | undefined,
): GoRead<GoParticipant> {
  const columns = readColumns(row, region);
  const state = readStateData(row.state_data);
  const history = readGoRecords(records.receipts, records.responses);
  const reminders = readReminders(records.jobs);
  if ('problems' in columns || 'problems' in state || 'problems' in history || 'problems' in reminders)
    return { problems: problemsIn(columns, state, history, reminders) };
  return { value: { row, ...columns.value, state: state.value, ...history.value, reminders: reminders.value } };
}

/** Their own row (`conversation_participants`): phone, status, enrolment time. */
function readColumns(
  row: GoParticipantRow,
  region: PhoneRegion | undefined,
): GoRead<Pick<GoParticipant, 'phone' | 'status' | 'enrolledAt'>> {
  const phone = goPhone(row.phone_number, region);
  const status = PARTICIPANT_STATUSES.find((known) => known === row.status);
  const enrolledAt = goTime(row.enrolled_at);
  if (phone && status && enrolledAt) return { value: { phone, status, enrolledAt } };
  const problems: GoValueProblem[] = [];
  if (!phone) {
    const message =
      `"${row.phone_number}" is not a valid number ` + '(set DEFAULT_PHONE_REGION for numbers without a country code)';
    problems.push({ field: 'phone_number', message });
  }
  if (!status) problems.push({ field: 'status', message: `unknown status "${row.status}"` });
  if (!enrolledAt) problems.push({ field: 'enrolled_at', message: `unreadable time "${row.enrolled_at}"` });
  return { problems };
}

function toImported(go: GoParticipant, options: MapOptions): ImportedParticipant {
  const goSchedules = go.state.scheduleRegistry ?? [];
  const participant: Participant = {
    id: options.ids.next('part'),
    phoneNumber: go.phone,
    name: text(go.row.name),
    gender: text(go.row.gender),
    ethnicity: text(go.row.ethnicity),
    background: text(go.row.background),
    timezone: goSchedules.map((schedule) => schedule.timezone).find(Boolean) ?? null,
    status: go.status,
    cohort: null,
    debug: false,
    enrolledAt: go.enrolledAt,
    createdAt: go.enrolledAt,
    updatedAt: options.now,
  };
  const conversation: Conversation = {
    id: options.ids.next('conv'),
    participantId: participant.id,
    channel: options.channel,
    flow: 'habit-coach',
    state: 'CONVERSATION_ACTIVE',
    // Go read any other sub-state, or none, as INTAKE.
    subState: go.state.conversationState === 'FEEDBACK' ? 'FEEDBACK' : 'INTAKE',
    version: 1,
    createdAt: go.enrolledAt,
    updatedAt: options.now,
  };
  const schedules = goSchedules.map((schedule) => toSchedule(schedule, participant, options));
  const kept = go.state.conversationHistory?.messages ?? [];
  const target = { conversationId: conversation.id, participantId: participant.id, phoneNumber: go.phone };
  const said = withResponses(history(kept, conversation.id, options.ids), go.responses, conversation.id, options.ids);
  const prompts = dailyPromptPolls(go.reminders, conversation.id, options.ids);
  return {
    goId: go.row.id,
    participant,
    conversation,
    messages: mergeByTime(said, prompts),
    dailyPrompts: { imported: prompts.length, goCounted: go.state.userProfile?.total_prompts ?? 0 },
    deliveries: goDeliveries(go.receipts, target, options.ids),
    profile: toProfile(go.state, participant.id, options.now),
    schedules,
    timers:
      participant.status === 'active'
        ? [
            ...schedules.map((schedule) => dailyPromptTimer(schedule, conversation.id, options.now, options)),
            ...reminderTimers(go.reminders, target, options),
          ]
        : [],
  };
}

/** Go's kept history; a `system` message (Go's code could keep one; none are written) no person saw either. */
function history(messages: readonly GoHistoryMessage[], conversationId: string, ids: IdGenerator): NewMessage[] {
  return messages
    .filter((message) => message.role !== 'system' && !NOT_SAID.test(message.content))
    .map((message) => ({
      id: ids.next('msg'),
      conversationId,
      role: message.role as 'user' | 'assistant',
      kind: 'text' as const,
      text: message.content,
      poll: null,
      source: message.role === 'user' ? ('participant' as const) : ('model' as const),
      turnId: null,
      createdAt: message.timestamp,
    }));
}

function toProfile(state: GoState, participantId: string, now: Date): Profile {
  const goProfile: GoProfile | null | undefined = state.userProfile;
  const profile = {
    ...emptyProfile(participantId, goProfile?.created_at ?? now),
    lastHabitPrompt: text(state.lastHabitPrompt),
    lastPromptSentAt: state.lastPromptSentAt ?? null,
  };
  if (!goProfile) return profile;
  const fields: Profile['fields'] = {};
  for (const field of PROFILE_TEXT_FIELDS) if (goProfile[field]) fields[field] = goProfile[field];
  const tone = goProfile.tone ?? {};
  return {
    ...profile,
    fields,
    intensity: goProfile.intensity || 'normal',
    successCount: goProfile.success_count ?? 0,
    totalPrompts: goProfile.total_prompts ?? 0,
    tone: {
      scores: tone.tone_scores ?? {},
      active: tone.tone_tags ?? [],
      lastUpdatedAt: tone.tone_last_updated_at ?? null,
    },
    updatedAt: goProfile.updated_at ?? now,
  };
}

function toSchedule(schedule: GoSchedule, participant: Participant, options: MapOptions): Schedule {
  return {
    id: options.ids.next('sched'),
    participantId: participant.id,
    kind: schedule.kind,
    fixedTime: schedule.fixedTime,
    windowStart: schedule.windowStart,
    windowEnd: schedule.windowEnd,
    timezone: schedule.timezone ?? participant.timezone ?? 'UTC',
    prepMinutes: options.prepMinutes,
    createdAt: schedule.createdAt ?? options.now,
  };
}
