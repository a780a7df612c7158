import { z } from 'zod';
import type { Poll } from '../core/domain.ts';

/** Row ↔ record conversions shared by the query files: dates, booleans, enums and JSON text. */

export function toMs(date: Date): number {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new Error('cannot store an invalid date');
  return ms;
}

export function toMsOrNull(date: Date | null | undefined): number | null {
  return date ? toMs(date) : null;
}

/** Reads an epoch-ms column (a number on both dialects; a numeric string is tolerated). */
export function fromMs(value: number | string): Date {
  return new Date(Number(value));
}

export function fromMsOrNull(value: number | string | null): Date | null {
  return value === null ? null : fromMs(value);
}

export function toBool(value: boolean): number {
  return value ? 1 : 0;
}

export function fromBool(value: number | boolean): boolean {
  return value === true || Number(value) === 1;
}

/** Checks that a stored text column holds one of the known values. */
export function oneOf<const T extends readonly string[]>(values: T, value: string, what: string): T[number] {
  if ((values as readonly string[]).includes(value)) return value as T[number];
  throw new Error(`stored ${what} ${JSON.stringify(value)} is not one of ${values.join(', ')}`);
}

/** Parses JSON text read from the database with a zod schema: structured values are checked at the edge. */
export function parseJson<S extends z.ZodType>(schema: S, text: string, what: string): z.output<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`stored ${what} is not valid JSON`, { cause: error });
  }
  const result = schema.safeParse(raw);
  if (!result.success) throw new Error(`stored ${what} does not match its schema: ${z.prettifyError(result.error)}`);
  return result.data;
}

export const pollSchema = z.object({
  question: z.string(),
  options: z.array(z.string()),
  firstNumber: z.number().int().positive().optional(),
});

export function pollToText(poll: Poll | null): string | null {
  return poll
    ? JSON.stringify({
        question: poll.question,
        options: poll.options,
        ...(poll.firstNumber ? { firstNumber: poll.firstNumber } : {}),
      })
    : null;
}

export function pollFromText(text: string | null): Poll | null {
  if (text === null) return null;
  const { firstNumber, ...poll } = parseJson(pollSchema, text, 'poll');
  return firstNumber ? { ...poll, firstNumber } : poll;
}
