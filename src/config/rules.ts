import { z } from 'zod';
import { webhookSigningKey } from '../channels/standard-webhooks.ts';
import { parseDuration } from '../core/duration.ts';
import { phoneRegion } from '../core/phone.ts';
import { canonicalTimeZone } from '../core/time-zone.ts';

/**
 * zod schemas for one variable's raw (trimmed, non-empty) string. Each fails with one message
 * saying what is expected and, unless the value is secret, what it got.
 */
const got = (raw: string) => `(got ${JSON.stringify(raw)})`;

function rule<T>(parse: (raw: string) => T | undefined, problem: (raw: string) => string) {
  return z.string().transform((raw, ctx): T => {
    const value = parse(raw);
    if (value !== undefined) return value;
    ctx.addIssue({ code: 'custom', message: problem(raw) });
    return z.NEVER;
  });
}

export function decimal(min: number, max: number) {
  return rule(
    (raw) => {
      if (!/^\d+(\.\d+)?$/.test(raw)) return undefined;
      const value = Number(raw);
      return value >= min && value <= max ? value : undefined;
    },
    (raw) => `must be a number from ${min} to ${max} ${got(raw)}`,
  );
}

export function integer(min: number, max: number, expected = `an integer from ${min} to ${max}`) {
  return rule(
    (raw) => {
      if (!/^[+-]?\d+$/.test(raw)) return undefined;
      const value = Number(raw);
      return value >= min && value <= max ? value : undefined;
    },
    (raw) => `must be ${expected} ${got(raw)}`,
  );
}

const BOOLEANS: Record<string, boolean> = { true: true, false: false, 1: true, 0: false, yes: true, no: false };

export function boolean() {
  return rule(
    (raw) => BOOLEANS[raw.toLowerCase()],
    (raw) => `must be one of true, false, 1, 0, yes, no ${got(raw)}`,
  );
}

export function oneOf<const T extends string>(values: readonly T[]) {
  return rule(
    (raw) => values.find((value) => value === raw),
    (raw) => `must be one of ${values.join(', ')} ${got(raw)}`,
  );
}

/** A region libphonenumber knows (ISO 3166-1 alpha-2), upper-cased. */
export function region() {
  return rule(
    (raw) => phoneRegion(raw) ?? undefined,
    (raw) => `must be a two-letter region code such as US or GB ${got(raw)}`,
  );
}

/** An IANA time zone in any case, in its canonical spelling (`america/toronto` → `America/Toronto`). */
export function timeZone() {
  return rule(
    (raw) => canonicalTimeZone(raw) ?? undefined,
    (raw) => `must be an IANA time zone such as UTC or America/Toronto ${got(raw)}`,
  );
}

/**
 * A BCP 47 language tag (`en-US`, `de-DE`) this runtime formats numbers and dates for, in its
 * canonical form (`en-us` → `en-US`). One tag: a list is refused.
 */
export function locale() {
  return rule(
    (raw) => {
      let tag: string | undefined;
      try {
        [tag] = Intl.getCanonicalLocales(raw);
      } catch {
        return undefined;
      }
      const supported = (formatter: { supportedLocalesOf(tags: string[]): string[] }) =>
        formatter.supportedLocalesOf([tag!]).length === 1;
      return tag && supported(Intl.DateTimeFormat) && supported(Intl.NumberFormat) ? tag : undefined;
    },
    (raw) => `must be a BCP 47 language tag this runtime formats for, such as en-US, de-DE or en-GB ${got(raw)}`,
  );
}

export function httpUrl() {
  return rule(
    (raw) => (/^https?:$/.test(URL.parse(raw)?.protocol ?? '') ? raw : undefined),
    (raw) => `must be an http:// or https:// URL ${got(raw)}`,
  );
}

/**
 * OTLP headers as the OpenTelemetry spec writes them: `key=value` pairs separated by commas, values
 * percent-encoded. Secret: a problem names the pair's position, never its value.
 */
export function headerList() {
  return z.string().transform((raw, ctx): Record<string, string> => {
    const headers: Record<string, string> = {};
    const pairs = raw.split(',').map((pair) => pair.trim());
    for (const [index, pair] of pairs.entries()) {
      const equals = pair.indexOf('=');
      const key = equals > 0 ? pair.slice(0, equals).trim() : '';
      let value: string | undefined;
      try {
        value = decodeURIComponent(pair.slice(equals + 1).trim());
      } catch {
        value = undefined;
      }
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) || !value || /[\r\n]/.test(value)) {
        ctx.addIssue({
          code: 'custom',
          message: `must be key=value pairs separated by commas, values percent-encoded (pair ${index + 1} is not)`,
        });
        return z.NEVER;
      }
      headers[key.toLowerCase()] = value;
    }
    return headers;
  });
}

/** A comma-separated list of web origins (`https://app.example.org`), without paths. */
export function origins() {
  return rule(
    (raw) => {
      const list = raw
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean);
      const valid = list.every((origin) => {
        const url = URL.parse(origin);
        return url !== null && /^https?:$/.test(url.protocol) && url.origin === origin.replace(/\/$/, '');
      });
      return valid && list.length > 0 ? list.map((origin) => origin.replace(/\/$/, '')) : undefined;
    },
    (raw) => `must be comma-separated origins like https://app.example.org (scheme, host and port only) ${got(raw)}`,
  );
}

/** A duration like `15m`, `3h`, `1h30m` or `0`, in ms. */
export function duration() {
  return rule(
    (raw) => parseDuration(raw) ?? undefined,
    (raw) => `must be a duration like 15m, 3h, 1h30m, 500ms or 0 ${got(raw)}`,
  );
}

/** A duration greater than 0, in ms. */
export function positiveDuration() {
  return rule(
    (raw) => {
      const ms = parseDuration(raw);
      return ms !== null && ms > 0 ? ms : undefined;
    },
    (raw) => `must be a duration greater than 0, like 1m, 30s or 500ms ${got(raw)}`,
  );
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

export function isoDateTime() {
  return rule(
    (raw) => {
      const at = new Date(raw);
      return ISO_DATE_TIME.test(raw) && !Number.isNaN(at.getTime()) ? at : undefined;
    },
    (raw) => `must be an ISO 8601 date-time with a zone, like 2026-06-01T12:00:00Z ${got(raw)}`,
  );
}

/** Any non-empty text without whitespace (host names, model names). */
export function token(what: string) {
  return rule(
    (raw) => (/\s/.test(raw) ? undefined : raw),
    (raw) => `must be ${what} without spaces ${got(raw)}`,
  );
}

export function identifier() {
  return rule(
    (raw) => (/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(raw) ? raw : undefined),
    (raw) =>
      'must be a schema name of letters, digits and underscores, not starting with a digit, at most 63 ' +
      `characters ${got(raw)}`,
  );
}

export function digits() {
  return rule(
    (raw) => (/^\d{1,32}$/.test(raw) ? raw : undefined),
    (raw) => `must be digits only ${got(raw)}`,
  );
}

export function templateName() {
  return rule(
    (raw) => (/^[a-z0-9_]{1,512}$/.test(raw) ? raw : undefined),
    (raw) => `must be a template name of lowercase letters, digits and underscores ${got(raw)}`,
  );
}

/** A Twilio SID: a two-letter prefix and 32 hex digits. */
export function twilioSid(prefix: string) {
  return rule(
    (raw) => (new RegExp(`^${prefix}[0-9a-fA-F]{32}$`).test(raw) ? raw : undefined),
    (raw) => `must be ${prefix} followed by 32 hex digits ${got(raw)}`,
  );
}

/** An E.164 number or a Messaging Service SID. */
export function twilioSender() {
  return rule(
    (raw) => (/^\+[1-9]\d{6,14}$/.test(raw) || /^MG[0-9a-fA-F]{32}$/.test(raw) ? raw : undefined),
    (raw) => `must be an E.164 number like +15005550006 or a Messaging Service SID (MG…) ${got(raw)}`,
  );
}

/** A secret: never echoed, only its length. */
export function secret(minLength: number) {
  return rule(
    (raw) => (raw.length >= minLength ? raw : undefined),
    (raw) => `must be at least ${minLength} characters (got ${raw.length})`,
  );
}

/** The URL with any password replaced, for error messages. */
export function withoutPassword(raw: string): string {
  const url = URL.parse(raw);
  if (!url?.password) return raw;
  url.password = '***';
  return url.href;
}

function isDatabaseUrl(raw: string): boolean {
  if (raw === 'sqlite::memory:') return true;
  if (raw.startsWith('sqlite:')) return raw.length > 'sqlite:'.length && !raw.startsWith('sqlite::');
  const url = URL.parse(raw);
  return (url?.protocol === 'postgres:' || url?.protocol === 'postgresql:') && raw.includes('://');
}

export function databaseUrl() {
  return rule(
    (raw) => (isDatabaseUrl(raw) ? raw : undefined),
    (raw) =>
      `must be sqlite:<path>, sqlite::memory: or a postgres:// or postgresql:// URL ${got(withoutPassword(raw))}`,
  );
}

/**
 * An HMAC key for signing: `whsec_<base64>` (the Standard Webhooks form, decoded) or raw text
 * (its UTF-8 bytes), of at least `minBytes` either way.
 */
export function signingSecret(minBytes: number) {
  return rule(
    (raw) => {
      const key = webhookSigningKey(raw);
      return key && key.length >= minBytes ? key : undefined;
    },
    (raw) =>
      raw.startsWith('whsec_')
        ? `must be whsec_ followed by the base64 of at least ${minBytes} bytes`
        : `must be at least ${minBytes} characters (got ${raw.length}), or whsec_ followed by base64`,
  );
}

/** A daily send's time and the days it falls on; a day, month or weekday left out is any. */
export interface CronSchedule {
  minute: number;
  hour: number;
  day?: number;
  month?: number;
  /** 0 = Sunday. */
  weekday?: number;
}

const CRON_FIELDS = [
  { name: 'minute', min: 0, max: 59, any: false },
  { name: 'hour', min: 0, max: 23, any: false },
  { name: 'day', min: 1, max: 31, any: true },
  { name: 'month', min: 1, max: 12, any: true },
  { name: 'weekday', min: 0, max: 6, any: true },
] as const;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The Go PromptPipe's five-field default cron, `minute hour day month weekday`, read strictly:
 * each field one number in its range (day, month and weekday may be `*`). Go read a range as its
 * first value (`1-5` as Monday), `*` as 0 for the minute and hour, and dropped a value it could
 * not parse; each of those is refused here, saying why.
 */
export function cronSchedule() {
  return z.string().transform((raw, ctx): CronSchedule => {
    const refuse = (message: string) => {
      ctx.addIssue({ code: 'custom', message: `${message} ${got(raw)}` });
      return z.NEVER;
    };
    const fields = raw.split(/\s+/);
    if (fields.length !== 5)
      return refuse('must be five fields, minute hour day month weekday, like "0 9 * * *" (09:00 every day)');
    const schedule: Record<string, number> = {};
    for (const [index, field] of CRON_FIELDS.entries()) {
      const value = fields[index]!;
      const expected = `a number from ${field.min} to ${field.max}${field.any ? ' or *' : ''}`;
      if (value === '*' && field.any) continue;
      if (value === '*')
        return refuse(`${field.name} must be a number: a schedule sends once a day, at its hour and minute`);
      if (!/^\d{1,2}$/.test(value))
        return refuse(`${field.name} "${value}" must be ${expected} (ranges, lists and steps are not read)`);
      const number = Number(value);
      if (number < field.min || number > field.max) return refuse(`${field.name} ${number} must be ${expected}`);
      schedule[field.name] = number;
    }
    const { day, month } = schedule;
    if (day !== undefined && month !== undefined && day > DAYS_IN_MONTH[month - 1]!)
      return refuse(`day ${day} never comes in month ${month}`);
    return schedule as unknown as CronSchedule;
  });
}
