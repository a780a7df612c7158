import type { IdGenerator } from '../../core/clock.ts';
import type { Conversation, NewMessage, Participant, ParticipantStatus } from '../../core/domain.ts';
import { PARTICIPANT_STATUSES } from '../../core/domain.ts';
import type { PhoneRegion } from '../../core/phone.ts';
import { emptyProfile, INTENSITIES, PROFILE_TEXT_FIELDS, type Profile } from '../../core/profile.ts';
import type { Schedule } from '../../core/schedule.ts';
import type { NewTimer } from '../../core/timer.ts';
import { canonicalTimeZone } from '../../core/time-zone.ts';
import { dailyPromptTimer } from '../../flows/habit-coach/timers/daily-prompt-timer.ts';
import { timerKeys } from '../../flows/habit-coach/timers/habit-timer-deps.ts';
import { goPhone, goTime, nested, stateData, text } from './go-values.ts';
import {
  goDeliveries,
  type GoReceiptRow,
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
  /** The transcript: Go's kept history, and the responses it does not hold, in time order. */
  messages: NewMessage[];
  /** Every send Go recorded (its receipts), with WhatsApp's reports on it. */
  deliveries: ImportedDelivery[];
  profile: Profile;
  schedules: Schedule[];
  timers: NewTimer[];
}

export interface ImportProblem {
  goId: string;
  field: string;
  message: string;
}

interface GoHistory {
  messages?: Array<{ role: string; content: string; timestamp: string }> | null;
}
interface GoSchedule {
  type: string;
  fixed_time?: string;
  random_start_time?: string;
  random_end_time?: string;
  timezone?: string;
  created_at?: string;
}
interface GoProfile extends Partial<Record<(typeof PROFILE_TEXT_FIELDS)[number], string>> {
  intensity?: string;
  success_count?: number;
  total_prompts?: number;
  created_at?: string;
  updated_at?: string;
  tone?: { tone_tags?: string[]; tone_scores?: Record<string, number>; tone_last_updated_at?: string };
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
 * no prompts, and reminders are re-armed only when still in the future.
 */
export function mapGoParticipant(
  row: GoParticipantRow,
  records: { jobs: readonly GoJobRow[]; receipts: readonly GoReceiptRow[]; responses: readonly GoResponseRow[] },
  options: MapOptions,
): ImportedParticipant | ImportProblem {
  const problem = (field: string, message: string): ImportProblem => ({ goId: row.id, field, message });
  const phone = goPhone(row.phone_number, options.region);
  if (!phone)
    return problem(
      'phone_number',
      `"${row.phone_number}" is not a valid number (set DEFAULT_PHONE_REGION for numbers without a country code)`,
    );
  if (!(PARTICIPANT_STATUSES as readonly string[]).includes(row.status))
    return problem('status', `unknown status "${row.status}"`);
  const enrolledAt = goTime(row.enrolled_at);
  if (!enrolledAt) return problem('enrolled_at', `unreadable time "${row.enrolled_at}"`);
  const data = stateData(row.state_data);
  const goSchedules = nested<GoSchedule[]>(data, 'scheduleRegistry') ?? [];
  const timezone =
    goSchedules.map((schedule) => (schedule.timezone ? canonicalTimeZone(schedule.timezone) : null)).find(Boolean) ??
    null;
  const participant: Participant = {
    id: options.ids.next('part'),
    phoneNumber: phone,
    name: text(row.name),
    gender: text(row.gender),
    ethnicity: text(row.ethnicity),
    background: text(row.background),
    timezone,
    status: row.status as ParticipantStatus,
    cohort: null,
    debug: false,
    enrolledAt,
    createdAt: enrolledAt,
    updatedAt: options.now,
  };
  const conversation: Conversation = {
    id: options.ids.next('conv'),
    participantId: participant.id,
    channel: options.channel,
    flow: 'habit-coach',
    state: 'CONVERSATION_ACTIVE',
    subState: data.conversationState === 'FEEDBACK' ? 'FEEDBACK' : 'INTAKE',
    version: 1,
    createdAt: enrolledAt,
    updatedAt: options.now,
  };
  const schedules = goSchedules.flatMap((schedule) => toSchedule(schedule, participant, options));
  const kept = nested<GoHistory>(data, 'conversationHistory')?.messages ?? [];
  const target = { conversationId: conversation.id, participantId: participant.id, phoneNumber: phone };
  return {
    goId: row.id,
    participant,
    conversation,
    messages: withResponses(
      history(kept, conversation.id, options.ids),
      records.responses,
      conversation.id,
      options.ids,
    ),
    deliveries: goDeliveries(records.receipts, target, options.ids),
    profile: toProfile(nested<GoProfile>(data, 'userProfile'), data, participant.id, options.now),
    schedules,
    timers:
      participant.status === 'active'
        ? [
            ...schedules.map((schedule) => dailyPromptTimer(schedule, conversation.id, options.now, options)),
            ...reminders(row.id, records.jobs, conversation.id, participant.id, options),
          ]
        : [],
  };
}

function history(messages: NonNullable<GoHistory['messages']>, conversationId: string, ids: IdGenerator): NewMessage[] {
  return messages
    .filter((message) => (message.role === 'user' || message.role === 'assistant') && !NOT_SAID.test(message.content))
    .map((message) => ({
      id: ids.next('msg'),
      conversationId,
      role: message.role as 'user' | 'assistant',
      kind: 'text' as const,
      text: message.content,
      poll: null,
      source: message.role === 'user' ? ('participant' as const) : ('model' as const),
      turnId: null,
      createdAt: goTime(message.timestamp) ?? new Date(0),
    }));
}

function toProfile(
  goProfile: GoProfile | undefined,
  data: Record<string, string>,
  participantId: string,
  now: Date,
): Profile {
  const profile = emptyProfile(participantId, goTime(goProfile?.created_at) ?? now);
  if (!goProfile) return profile;
  const fields: Profile['fields'] = {};
  for (const field of PROFILE_TEXT_FIELDS) if (goProfile[field]) fields[field] = goProfile[field];
  const tone = goProfile.tone ?? {};
  return {
    ...profile,
    fields,
    intensity: (INTENSITIES as readonly string[]).includes(goProfile.intensity ?? '')
      ? (goProfile.intensity as Profile['intensity'])
      : 'normal',
    successCount: goProfile.success_count ?? 0,
    totalPrompts: goProfile.total_prompts ?? 0,
    tone: {
      scores: tone.tone_scores ?? {},
      active: tone.tone_tags ?? [],
      lastUpdatedAt: goTime(tone.tone_last_updated_at),
    },
    lastHabitPrompt: text(data.lastHabitPrompt),
    lastPromptSentAt: goTime(data.lastPromptSentAt),
    updatedAt: goTime(goProfile.updated_at) ?? now,
  };
}

function toSchedule(schedule: GoSchedule, participant: Participant, options: MapOptions): Schedule[] {
  const timezone = (schedule.timezone && canonicalTimeZone(schedule.timezone)) || participant.timezone || 'UTC';
  const base = {
    id: options.ids.next('sched'),
    participantId: participant.id,
    timezone,
    prepMinutes: options.prepMinutes,
    createdAt: goTime(schedule.created_at) ?? options.now,
  };
  if (schedule.type === 'fixed' && schedule.fixed_time)
    return [{ ...base, kind: 'fixed', fixedTime: schedule.fixed_time, windowStart: null, windowEnd: null }];
  if (schedule.type === 'random' && schedule.random_start_time && schedule.random_end_time) {
    return [
      {
        ...base,
        kind: 'random',
        fixedTime: null,
        windowStart: schedule.random_start_time,
        windowEnd: schedule.random_end_time,
      },
    ];
  }
  return [];
}

/** A queued Go reminder still to come becomes ours; one already due was Go's to send. */
function reminders(
  goId: string,
  jobs: readonly GoJobRow[],
  conversationId: string,
  participantId: string,
  options: MapOptions,
): NewTimer[] {
  return jobs.flatMap((job) => {
    if (job.kind !== 'daily_prompt_reminder') return [];
    const payload = JSON.parse(job.payload_json) as { participant_id?: string; expected_sent_at?: string };
    const dueAt = goTime(job.run_at);
    const sentAt = goTime(payload.expected_sent_at);
    if (payload.participant_id !== goId || !dueAt || !sentAt || dueAt <= options.now) return [];
    return [
      {
        id: options.ids.next('tmr'),
        kind: 'reminder',
        conversationId,
        participantId,
        dedupKey: timerKeys.reminder(participantId),
        dueAt,
        payload: { promptSentAt: sentAt.toISOString() },
        createdAt: options.now,
      },
    ];
  });
}
