import { isBlank } from '../core/blank.ts';
import { z } from 'zod';
import {
  PARTICIPANT_STATUSES,
  type Message,
  type OutboxItem,
  type Participant,
  type ToolCallRecord,
  type TurnRecord,
} from '../core/domain.ts';
import type { Profile } from '../core/profile.ts';
import type { Schedule } from '../core/schedule.ts';
import type { Timer } from '../core/timer.ts';

const optionalText = (max: number) => z.string().trim().max(max).nullable().optional();

export const enrollmentBody = z.strictObject({
  phone_number: z.string().min(1).max(40),
  name: optionalText(200),
  gender: optionalText(100),
  ethnicity: optionalText(100),
  background: optionalText(2000),
  timezone: z.string().max(64).nullable().optional(),
  /** The study group (an arm, a site): free text. */
  cohort: optionalText(100),
  /** Checked against the channels the server runs by the service. */
  channel: z.string().min(1).max(40).optional(),
  /** Checked against the flows the server runs by the service. */
  flow: z.string().min(1).max(40).optional(),
});

export const participantUpdateBody = z
  .strictObject({
    name: optionalText(200),
    gender: optionalText(100),
    ethnicity: optionalText(100),
    background: optionalText(2000),
    timezone: z.string().max(64).nullable().optional(),
    status: z.enum(PARTICIPANT_STATUSES).optional(),
    cohort: optionalText(100),
    debug: z.boolean().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'give at least one field to change' });

export const participantParams = z.strictObject({ id: z.string().min(1).max(100) });

/** Offsets beyond this are refused: no list is that long. */
const MAX_OFFSET = 1_000_000_000;

/**
 * A whole number in a query string, in decimal digits, `fallback` when absent. `0x10`, `1e2`, an
 * empty value or the parameter given twice is refused with the range (a plain coercion read them
 * as 16, 100, 0 and "not a number"). Documented as the integer it is.
 */
export function queryInteger(min: number, max: number, fallback: number) {
  const message = `must be a whole number from ${min} to ${max}`;
  return z
    .string({ error: message })
    .refine((text) => /^\d{1,16}$/.test(text), message)
    .transform(Number)
    .pipe(z.number().min(min, message).max(max, message))
    .meta({ type: 'integer', minimum: min, maximum: max, description: `default ${fallback}` } as Record<
      string,
      unknown
    >)
    .default(fallback);
}

/** A page of a list: `limit` and `offset`. */
export const pageFields = { limit: queryInteger(1, 1000, 100), offset: queryInteger(0, MAX_OFFSET, 0) };

export const listQuery = z.strictObject({
  status: z.enum(PARTICIPANT_STATUSES).optional(),
  cohort: z.string().min(1).max(100).optional(),
  ...pageFields,
});

export const historyQuery = z.strictObject({
  all: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});

export const forceStateBody = z.strictObject({
  sub_state: z.string().min(1).max(50),
  reason: z.string().max(500).optional(),
});

export const turnsQuery = z.strictObject({ limit: queryInteger(1, 500, 50) });

export const inboundBody = z.strictObject({
  from: z.string().min(1).max(40),
  text: z
    .string()
    .max(4096)
    .refine((text) => !isBlank(text), 'must contain text, not only spaces'),
  message_id: z.string().min(1).max(200).optional(),
});

export function participantJson(participant: Participant) {
  return {
    id: participant.id,
    phone_number: participant.phoneNumber,
    name: participant.name,
    gender: participant.gender,
    ethnicity: participant.ethnicity,
    background: participant.background,
    timezone: participant.timezone,
    status: participant.status,
    cohort: participant.cohort,
    debug: participant.debug,
    enrolled_at: participant.enrolledAt.toISOString(),
    created_at: participant.createdAt.toISOString(),
    updated_at: participant.updatedAt.toISOString(),
  };
}

export function deliveryJson(item: OutboxItem) {
  const iso = (date: Date | null) => date?.toISOString() ?? null;
  return {
    id: item.id,
    message_id: item.idempotencyKey.split('#')[0],
    channel: item.channel,
    kind: item.kind,
    text: item.text,
    status: item.status,
    attempts: item.attempts,
    last_error: item.lastError,
    sent_at: iso(item.sentAt),
    provider_message_id: item.providerMessageId,
    delivery_status: item.deliveryStatus,
    delivery_status_at: iso(item.deliveryStatusAt),
    delivery_error: item.deliveryError,
    created_at: item.createdAt.toISOString(),
  };
}

export function messageJson(message: Message) {
  return {
    id: message.id,
    seq: message.seq,
    role: message.role,
    kind: message.kind,
    text: message.text,
    ...(message.poll ? { poll: message.poll } : {}),
    source: message.source,
    turn_id: message.turnId,
    created_at: message.createdAt.toISOString(),
  };
}

export function profileJson(profile: Profile) {
  return {
    ...profile.fields,
    intensity: profile.intensity,
    success_count: profile.successCount,
    total_prompts: profile.totalPrompts,
    tone: {
      scores: profile.tone.scores,
      active: profile.tone.active,
      last_updated_at: profile.tone.lastUpdatedAt?.toISOString() ?? null,
    },
    last_habit_prompt: profile.lastHabitPrompt,
    last_prompt_sent_at: profile.lastPromptSentAt?.toISOString() ?? null,
    field_updated_at: Object.fromEntries(
      Object.entries(profile.fieldUpdatedAt).map(([key, at]) => [key, at.toISOString()]),
    ),
    updated_at: profile.updatedAt.toISOString(),
  };
}

/** JSON Schema for the OpenAPI document, from the same schemas that validate. */
export function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const result = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete result.$schema;
  return result;
}

export function scheduleJson(schedule: Schedule) {
  return {
    id: schedule.id,
    type: schedule.kind,
    fixed_time: schedule.fixedTime,
    random_start_time: schedule.windowStart,
    random_end_time: schedule.windowEnd,
    timezone: schedule.timezone,
    prep_minutes: schedule.prepMinutes,
    created_at: schedule.createdAt.toISOString(),
  };
}

export function timerJson(timer: Timer) {
  return {
    id: timer.id,
    kind: timer.kind,
    due_at: timer.dueAt.toISOString(),
    key: timer.dedupKey,
    attempts: timer.attempts,
  };
}

export function turnJson(turn: TurnRecord, calls: ToolCallRecord[]) {
  return {
    id: turn.id,
    trigger: turn.trigger,
    module: turn.module,
    status: turn.status,
    model_calls: turn.modelCalls,
    tool_rounds: turn.toolRounds,
    model_ms: turn.modelMs,
    tool_ms: turn.toolMs,
    total_ms: turn.totalMs,
    first_token_ms: turn.firstTokenMs,
    time_to_status_ms: turn.timeToStatusMs,
    error: turn.error,
    started_at: turn.startedAt.toISOString(),
    finished_at: turn.finishedAt.toISOString(),
    trace_id: turn.traceId ?? null,
    attempts: turn.attempts,
    tool_calls: calls.map((call) => ({
      name: call.name,
      round: call.round,
      arguments: call.arguments,
      result: call.result,
      status: call.status,
      duration_ms: call.durationMs,
    })),
  };
}
