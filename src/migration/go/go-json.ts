import { z } from 'zod';
import { goTime, isNoTime } from './go-values.ts';

/** What is wrong with one Go value: where it is (`table.column`, a path into its JSON) and what. */
export interface GoValueProblem {
  field: string;
  message: string;
}

/** A checked Go value, or every problem found in it. */
export type GoRead<T> = { value: T } | { problems: GoValueProblem[] };

/** The problems of every read that failed. */
export function problemsIn(...reads: ReadonlyArray<GoRead<unknown>>): GoValueProblem[] {
  return reads.flatMap((read) => ('problems' in read ? read.problems : []));
}

/** Every read's value, or the problems of all that failed. */
export function readAll<T>(reads: ReadonlyArray<GoRead<T>>): GoRead<T[]> {
  const problems = problemsIn(...reads);
  return problems.length > 0 ? { problems } : { value: reads.flatMap((read) => ('value' in read ? [read.value] : [])) };
}

/**
 * JSON text as Go's `json.Marshal` wrote it, decoded and read with `schema`. Empty text is null,
 * as Go's `''` for a value cleared.
 */
export function goJson<Schema extends z.ZodType>(schema: Schema) {
  return z
    .string()
    .transform((text, ctx): unknown => {
      if (text.trim() === '') return null;
      try {
        return JSON.parse(text);
      } catch (error) {
        ctx.addIssue({
          code: 'custom',
          message: `not JSON: ${error instanceof Error ? error.message : String(error)}`,
        });
        return z.NEVER;
      }
    })
    .pipe(schema.nullable());
}

/** A Go `time.Time` that Go always sets (RFC 3339 in JSON, DATETIME text in a column). */
export const goInstant = z.string().transform((value, ctx) => {
  const date = goTime(value);
  if (date) return date;
  ctx.addIssue({ code: 'custom', message: `unreadable time ${JSON.stringify(value)}` });
  return z.NEVER;
});

/** A Go `time.Time` that may never have been set: Go's zero time or empty text is null. */
export const goOptionalInstant = z.string().transform((value, ctx) => {
  if (isNoTime(value)) return null;
  const date = goTime(value);
  if (date) return date;
  ctx.addIssue({ code: 'custom', message: `unreadable time ${JSON.stringify(value)}` });
  return z.NEVER;
});

/** Reads `value` with `schema`; each problem is named under `field`, and `row` (a Go row's name) leads its message. */
export function readGo<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  field: string,
  row?: string,
): GoRead<z.output<Schema>> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return { value: result.data };
  return {
    problems: result.error.issues.map((issue) => ({
      field: field + issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join(''),
      message: (row ? `${row}: ` : '') + describeIssue(issue),
    })),
  };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is missing';
  if (issue.code === 'invalid_type') return `must be ${article(issue.expected)} (got ${typeName(issue.input)})`;
  if (issue.code === 'invalid_value') {
    const values = issue.values.map((value) => JSON.stringify(value)).join(', ');
    return `must be one of ${values} (got ${typeName(issue.input)})`;
  }
  return issue.message;
}

function article(expected: string): string {
  if (expected === 'int') return 'a whole number';
  if (expected === 'record') return 'an object';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number') return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
