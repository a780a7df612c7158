import { z } from 'zod';
import { canonicalTimeZone } from '../../core/time-zone.ts';

/** The Go PromptPipe's prompt types (`models.PromptType`); `static` when a request names none. */
export const PROMPT_TYPES = ['static', 'genai', 'branch', 'custom', 'conversation'] as const;
export type PromptType = (typeof PROMPT_TYPES)[number];

const field = (max: number) => z.string().max(max).optional();

/** `models.Schedule`: cron-like fields, each optional (left out: any day; hour and minute: 0). */
export const goScheduleSchema = z.strictObject({
  minute: z.number().int().min(0, 'must be between 0 and 59').max(59, 'must be between 0 and 59').optional(),
  hour: z.number().int().min(0, 'must be between 0 and 23').max(23, 'must be between 0 and 23').optional(),
  day: z.number().int().min(1, 'must be between 1 and 31').max(31, 'must be between 1 and 31').optional(),
  month: z.number().int().min(1, 'must be between 1 and 12').max(12, 'must be between 1 and 12').optional(),
  weekday: z
    .number()
    .int()
    .min(0, 'must be between 0 and 6 (Sunday=0)')
    .max(6, 'must be between 0 and 6 (Sunday=0)')
    .optional(),
  timezone: z
    .string()
    .max(64)
    .refine(
      (zone) => zone === '' || canonicalTimeZone(zone) !== null,
      'is not an IANA time zone (e.g. America/Toronto)',
    )
    .optional(),
});
export type GoSchedule = z.output<typeof goScheduleSchema>;

export const branchOptionSchema = z.strictObject({ label: z.string().max(1000), body: z.string().max(10_000) });

/**
 * `models.Prompt`, the body of `POST /send` and `POST /schedule`. Which fields a type needs is
 * checked after the recipient, in the Go server's order (`checkPrompt`).
 */
export const goPromptBody = z.strictObject({
  to: z.string().min(1, 'is required').max(40),
  // Go reads a missing or empty type as static.
  type: z.preprocess((value) => (value === '' ? undefined : value), z.enum(PROMPT_TYPES).default('static')),
  state: field(100),
  body: field(100_000),
  system_prompt: field(32_000),
  user_prompt: field(32_000),
  branch_options: z.array(branchOptionSchema).max(1000).optional(),
  // Go read `null` as no schedule (then its default one).
  schedule: z.preprocess((value) => (value === null ? undefined : value), goScheduleSchema.optional()),
});
export type GoPrompt = z.output<typeof goPromptBody>;
/** A prompt's content: what is sent, without to whom or when. */
export type PromptContent = Omit<GoPrompt, 'to' | 'schedule'>;

/** `models.Response`: `time` is accepted and replaced with the server's clock, as Go did. */
export const goResponseBody = z.strictObject({
  from: z.string().min(1, 'is required').max(40),
  body: z
    .string()
    .max(4096)
    .refine((text) => text.trim() !== '', 'must contain text'),
  time: z.number().int().optional(),
});

export const timerParams = z.strictObject({ id: z.string().min(1).max(100) });
