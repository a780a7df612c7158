import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { activeTraceFields } from '../observability/trace-fields.ts';

/** The application logger: pino, JSON lines. Pass it down; there is no module-level instance. */
export type Logger = PinoLogger;

export interface LoggerOptions {
  /** A pino level: fatal, error, warn, info, debug, trace or silent. */
  level: string;
  /** Also redact personal data (phone numbers, message text); secrets are redacted regardless. */
  redact: boolean;
  /** Where the JSON lines go; stdout when absent. */
  destination?: DestinationStream;
}

export const REDACTED = '[redacted]';

/** Field names that hold secrets: redacted at the top level and two levels down, always. */
const SECRET_KEYS = [
  'apiKey',
  'api_key',
  'apiToken',
  'api_token',
  'token',
  'accessToken',
  'access_token',
  'password',
  'secret',
  'authorization',
  'Authorization',
  'cookie',
];

/** Field names that hold personal data: redacted like secrets, when `redact` is on. */
const PERSONAL_KEYS = ['phone', 'phoneNumber', 'phone_number', 'from', 'to', 'recipient', 'text', 'content'];

/** Places the key rule does not reach (`req.headers.authorization` and `body.text` it does). */
const SECRET_PATHS = ['headers["x-api-key"]', '*.headers["x-api-key"]'];
/** `message` only at the top: an error's `err.message` stays readable. */
const PERSONAL_PATHS = [
  'message',
  'messages[*].content',
  'messages[*].text',
  '*.messages[*].content',
  '*.messages[*].text',
];

/** `key`, `*.key` and `*.*.key`: pino's wildcards match exactly one level each. */
const everyLevel = (keys: readonly string[]) => keys.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

/** The pino redaction paths for the given mode (exported for tests and docs). */
export function redactPaths(redactPersonal: boolean): string[] {
  const secrets = [...everyLevel(SECRET_KEYS), ...SECRET_PATHS];
  return redactPersonal ? [...secrets, ...everyLevel(PERSONAL_KEYS), ...PERSONAL_PATHS] : secrets;
}

export function createLogger(options: LoggerOptions): Logger {
  const config = {
    level: options.level,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: redactPaths(options.redact), censor: REDACTED },
    // The active span's trace_id and span_id (tracing on), so a log line leads to its trace.
    mixin: activeTraceFields,
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/**
 * A hint of a phone number that does not identify it: `+14165550123` → `+1416…0123`. Short or
 * odd values keep at most their last two digits.
 */
export function maskPhone(phone: string): string {
  const plus = phone.trim().startsWith('+') ? '+' : '';
  const digits = phone.replace(/\D/g, '');
  if (digits.length >= 10) return `${plus}${digits.slice(0, 4)}…${digits.slice(-4)}`;
  if (digits.length >= 4) return `…${digits.slice(-2)}`;
  return '…';
}
