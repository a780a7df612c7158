import { z } from 'zod';
import type { Message } from '../../core/domain.ts';
import type { LlmProvider } from '../../llm/llm-provider.ts';
import { ASSISTANT_MARKERS } from './markers.ts';

/**
 * What to look for in earlier conversation: keywords and optional time bounds (spec 003,
 * "Conversation Memory Enrichment").
 */
export interface RecallQuery {
  keywords: string[];
  from?: Date;
  to?: Date;
}

const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/;
const MAX_KEYWORDS = 10;
const MAX_KEYWORD_LENGTH = 60;

/** A time bound: an ISO 8601 date or date-time (UTC when no offset is given). */
export const isoBound = z.string().regex(ISO_DATE, 'an ISO 8601 date (2026-11-22) or date-time (2026-11-22T15:00:00Z)');

/** What the recall tool accepts: strict, so the model learns what to fix. */
export const recallToolInput = z.object({
  keywords: z
    .array(z.string().trim().min(1).max(MAX_KEYWORD_LENGTH))
    .min(1)
    .max(MAX_KEYWORDS)
    .describe('distinctive words to look for'),
  from: isoBound.optional().describe('earliest time, UTC'),
  to: isoBound.optional().describe('latest time, UTC; a date alone means the end of that day'),
});

/** What the extraction call may answer: lenient, so a usable answer is not thrown away for a detail. */
const extractedSchema = z.object({
  keywords: z.array(z.unknown()).default([]),
  from: z.unknown().optional(),
  to: z.unknown().optional(),
});

/**
 * Keywords trimmed, cut and capped; bounds that are not ISO dates dropped; a date alone as `to`
 * covers that whole day.
 */
export function toRecallQuery(raw: { keywords: unknown[]; from?: unknown; to?: unknown }): RecallQuery {
  const keywords = raw.keywords
    .filter((keyword): keyword is string => typeof keyword === 'string')
    .map((keyword) => keyword.trim().slice(0, MAX_KEYWORD_LENGTH))
    .filter((keyword) => keyword !== '')
    .slice(0, MAX_KEYWORDS);
  const from = parseBound(raw.from, 'start');
  const to = parseBound(raw.to, 'end');
  return { keywords, ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

function parseBound(value: unknown, side: 'start' | 'end'): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const match = ISO_DATE.exec(value.trim());
  if (!match) return undefined;
  const [, date, time, zone] = match;
  if (!calendarDate(date!)) return undefined; // 2026-02-30 would roll over to March
  const text = time
    ? `${date}T${time}${zone ?? 'Z'}`
    : `${date}T${side === 'start' ? '00:00:00.000' : '23:59:59.999'}Z`;
  const parsed = new Date(text);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

function calendarDate(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const probe = new Date(Date.UTC(year, month - 1, day));
  return probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}

export interface ExtractOptions {
  provider: LlmProvider;
  model: string | undefined;
  now: Date;
  signal: AbortSignal;
  timeoutMs: number;
}

export const EXTRACTION_ATTEMPTS = 2;

/**
 * One short model call that answers `{"keywords": [...], "from"?: ISO, "to"?: ISO}`; two
 * attempts, then no recall. Never throws but for the turn's own abort.
 */
export async function extractRecallQuery(request: string, options: ExtractOptions): Promise<RecallQuery | null> {
  for (let attempt = 1; attempt <= EXTRACTION_ATTEMPTS; attempt += 1) {
    try {
      const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]);
      const response = await options.provider.complete(
        {
          messages: [
            { role: 'system', content: extractionPrompt(options.now) },
            { role: 'user', content: request },
          ],
          model: options.model,
          temperature: 0,
          maxOutputTokens: 200,
        },
        { signal },
      );
      const parsed = parseRecallQuery(response.text);
      if (parsed) return parsed;
    } catch {
      options.signal.throwIfAborted();
    }
  }
  return null;
}

export function extractionPrompt(now: Date): string {
  return [
    `${ASSISTANT_MARKERS.recall} Extract search parameters for looking up the earlier conversation with this user.`,
    'Reply with JSON only: {"keywords": ["..."], "from": "<ISO 8601, optional>", "to": "<ISO 8601, optional>"}.',
    'keywords: the few distinctive words to search for (names, topics, things); [] when the request needs ' +
      'nothing from earlier conversation.',
    'from/to: only when the request names a time ("yesterday", "last week"), as UTC date-times.',
    `The current time is ${now.toISOString()}.`,
  ].join('\n');
}

/** The JSON object in a model's answer (bare, or in a fenced block), validated; null when there is none. */
export function parseRecallQuery(text: string): RecallQuery | null {
  const body = text.match(/\{[\s\S]*\}/)?.[0];
  if (!body) return null;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return null;
  }
  const result = extractedSchema.safeParse(json);
  return result.success ? toRecallQuery(result.data) : null;
}

/** Recalled messages as the model reads them: oldest first, each with its UTC time and who said it. */
export function formatRecalled(messages: readonly Message[]): string {
  return messages
    .map((m) => {
      const at = m.createdAt.toISOString().slice(0, 16).replace('T', ' ');
      return `- [${at} UTC] ${m.role === 'user' ? 'User' : 'Assistant'}: ${m.text}`;
    })
    .join('\n');
}
