import { z } from 'zod';
import {
  boolean,
  cronSchedule,
  decimal,
  origins,
  region,
  databaseUrl,
  digits,
  duration,
  headerList,
  positiveDuration,
  httpUrl,
  identifier,
  integer,
  isoDateTime,
  locale,
  oneOf,
  secret,
  signingSecret,
  templateName,
  timeZone,
  token,
  twilioSender,
  twilioSid,
} from './rules.ts';

export const LLM_PROVIDERS = ['openai', 'offline'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const CLOCK_MODES = ['system', 'virtual'] as const;
export const SWITCHES = ['on', 'off'] as const;
export const OTLP_PROTOCOLS = ['http/json'] as const;

const MAX_TIMER_MS = 2_147_483_647;

/**
 * One schema per variable, over the raw strings after empty values are dropped and the defaults
 * of `CONFIG_VARIABLES` filled in: a variable with a default is always present here.
 */
export const envSchema = z.object({
  HOST: token('a host name or address'),
  PORT: integer(0, 65_535, 'an integer from 1 to 65535, or 0 for any free port'),
  API_TOKEN: secret(16).optional(),
  MAX_BODY_BYTES: integer(1, 104_857_600),
  SHUTDOWN_TIMEOUT_MS: integer(0, 3_600_000),
  CORS_ORIGINS: origins().optional(),
  METRICS_PUBLIC: boolean(),

  TOKEN_SECRET: secret(32).optional(),
  RATE_LIMITS: oneOf(SWITCHES),
  AUTH_FAILURE_LIMIT: integer(1, 1_000_000),
  AUTH_FAILURE_WINDOW: positiveDuration(),
  TURN_RATE_LIMIT: integer(1, 10_000),
  TURN_RATE_WINDOW: positiveDuration(),

  DATABASE_URL: databaseUrl(),
  DATABASE_SCHEMA: identifier(),
  DATABASE_POOL_MAX: integer(1, 200),
  DATABASE_CONNECT_TIMEOUT_MS: integer(100, 600_000),
  DATABASE_QUERY_TIMEOUT_MS: integer(100, 600_000),
  SQLITE_BUSY_TIMEOUT_MS: integer(0, 600_000),

  LLM_PROVIDER: oneOf(LLM_PROVIDERS).optional(),
  LLM_BASE_URL: httpUrl().optional(),
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: token('a model name').optional(),
  LLM_INTERPRETER_MODEL: token('a model name').optional(),
  LLM_EMBEDDING_MODEL: token('a model name').optional(),
  LLM_TEMPERATURE: decimal(0, 2).optional(),
  LLM_TIMEOUT_MS: integer(1, MAX_TIMER_MS, 'an integer greater than 0'),
  LLM_MAX_RETRIES: integer(0, 10),
  MODEL_OUTAGE_NOTICE: z.string().max(500, 'must be at most 500 characters'),
  LLM_MAX_TOOL_CALLS_PER_RESPONSE: integer(1, 100),
  LLM_MAX_TOOL_CALLS_PER_TURN: integer(1, 1000),

  CHAT_HISTORY_LIMIT: integer(-1, Number.MAX_SAFE_INTEGER, 'an integer of at least -1 (-1 = the last 50, 0 = none)'),
  DEFAULT_PHONE_REGION: region().optional(),
  AUTO_ENROLL_NEW_USERS: boolean(),
  PROMPTPIPE_DEBUG: boolean(),

  INTAKE_BOT_PROMPT_FILE: z.string().optional(),
  FEEDBACK_TRACKER_PROMPT_FILE: z.string().optional(),
  PROMPT_GENERATOR_PROMPT_FILE: z.string().optional(),
  SCHEDULER_PREP_TIME_MINUTES: integer(0, 1440),
  DAILY_PROMPT_REMINDER_DELAY: duration(),
  AUTO_FEEDBACK_AFTER_PROMPT_ENABLED: boolean(),
  AUTO_FEEDBACK_DELAY: duration(),
  FEEDBACK_INITIAL_TIMEOUT: duration(),
  FEEDBACK_FOLLOWUP_DELAY: duration(),

  STUDY_TIMEZONE: timeZone(),

  PLATFORM_DEFAULT_SCHEDULE: cronSchedule().optional(),
  PLATFORM_CUSTOM_GENERATOR: z.string().optional(),

  ASSISTANT_PROFILES_DIR: z.string().optional(),
  ASSISTANT_DEFAULT_PROFILE: token('a profile name'),
  ASSISTANT_LOCATION: z.string().max(200, 'must be at most 200 characters'),
  ASSISTANT_RECENT_WINDOW: duration(),
  ASSISTANT_RECENT_MAX_MESSAGES: integer(0, 50),
  ASSISTANT_MAX_MODEL_CALLS: integer(1, 50),
  ASSISTANT_RECALL_MAX_RESULTS: integer(1, 100),
  ASSISTANT_RECALL_MIN_SIMILARITY: decimal(-1, 1),
  ASSISTANT_HELPER_TIMEOUT_MS: integer(1, MAX_TIMER_MS, 'an integer greater than 0'),
  MCP_CONFIG_FILE: z.string().optional(),

  DESK_LOCALE: locale(),
  DESK_TIME_ZONE: timeZone(),

  CLOCK: oneOf(CLOCK_MODES),
  CLOCK_START: isoDateTime().optional(),

  OUTBOUND_WEBHOOK_URL: httpUrl().optional(),
  OUTBOUND_WEBHOOK_SECRET: signingSecret(16).optional(),
  OUTBOUND_MAX_ATTEMPTS: integer(1, 100),
  OUTBOUND_CONCURRENCY: integer(1, 1000),

  WHATSAPP_ACCESS_TOKEN: secret(8).optional(),
  WHATSAPP_PHONE_NUMBER_ID: digits().optional(),
  WHATSAPP_APP_SECRET: secret(8).optional(),
  WHATSAPP_VERIFY_TOKEN: secret(8).optional(),
  WHATSAPP_API_BASE_URL: httpUrl(),
  WHATSAPP_TEMPLATE_NAME: templateName().optional(),
  WHATSAPP_TEMPLATE_LANGUAGE: token('a language code like en_US'),
  WHATSAPP_TEMPLATE_TEXT_LENGTH: integer(0, 1000),

  TWILIO_ACCOUNT_SID: twilioSid('AC').optional(),
  TWILIO_AUTH_TOKEN: secret(8).optional(),
  TWILIO_FROM: twilioSender().optional(),
  TWILIO_API_BASE_URL: httpUrl(),
  PUBLIC_BASE_URL: httpUrl().optional(),

  LOG_LEVEL: oneOf(LOG_LEVELS),
  LOG_REDACT: boolean(),

  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: headerList().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: oneOf(OTLP_PROTOCOLS),
  OTEL_SERVICE_NAME: token('a service name'),
});

export type ParsedEnv = z.output<typeof envSchema>;
export type RawEnv = Partial<Record<keyof ParsedEnv, string>>;

/** Rules that involve more than one variable, checked on the raw values; one message each. */
export function crossFieldProblems(raw: RawEnv): Array<{ variable: string; message: string }> {
  const problems: Array<{ variable: string; message: string }> = [];
  if (raw.LLM_PROVIDER === 'openai' && raw.LLM_BASE_URL === undefined && raw.LLM_API_KEY === undefined) {
    problems.push({
      variable: 'LLM_PROVIDER',
      message:
        'is "openai" but neither LLM_BASE_URL nor LLM_API_KEY is set: set LLM_BASE_URL to an OpenAI-compatible ' +
        'endpoint (or LLM_API_KEY for OpenAI itself), or use LLM_PROVIDER=offline',
    });
  }
  if (
    raw.LLM_EMBEDDING_MODEL !== undefined &&
    (raw.LLM_PROVIDER === 'offline' || (raw.LLM_BASE_URL === undefined && raw.LLM_API_KEY === undefined))
  ) {
    problems.push({
      variable: 'LLM_EMBEDDING_MODEL',
      message:
        'needs an OpenAI-compatible endpoint (LLM_BASE_URL, or LLM_API_KEY for OpenAI itself); the offline demo ' +
        'model recalls by full-text search alone',
    });
  }
  if (raw.CLOCK_START !== undefined && raw.CLOCK !== 'virtual') {
    problems.push({
      variable: 'CLOCK_START',
      message: `only applies with CLOCK=virtual (CLOCK is ${JSON.stringify(raw.CLOCK)})`,
    });
  }
  if (raw.HOST !== undefined && !isLoopback(raw.HOST) && raw.API_TOKEN === undefined) {
    problems.push({
      variable: 'HOST',
      message:
        `is ${JSON.stringify(raw.HOST)}, reachable from other machines, but API_TOKEN is not set: set API_TOKEN ` +
        '(at least 16 characters) or listen on 127.0.0.1',
    });
  }
  if (
    raw.OTEL_EXPORTER_OTLP_HEADERS !== undefined &&
    raw.OTEL_EXPORTER_OTLP_ENDPOINT === undefined &&
    raw.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT === undefined
  ) {
    problems.push({
      variable: 'OTEL_EXPORTER_OTLP_HEADERS',
      message: 'only applies with OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (tracing is off)',
    });
  }
  if (raw.TOKEN_SECRET !== undefined && raw.API_TOKEN === undefined) {
    problems.push({
      variable: 'TOKEN_SECRET',
      message: 'only applies with API_TOKEN (without it nothing is authenticated)',
    });
  }
  if (raw.RATE_LIMITS === 'off' && raw.HOST !== undefined && !isLoopback(raw.HOST)) {
    problems.push({
      variable: 'RATE_LIMITS',
      message: `may be off only on a loopback HOST (tests, benchmarks); HOST is ${JSON.stringify(raw.HOST)}`,
    });
  }
  problems.push(
    ...incompleteChannel(
      raw,
      [
        'WHATSAPP_ACCESS_TOKEN',
        'WHATSAPP_PHONE_NUMBER_ID',
        'WHATSAPP_APP_SECRET',
        'WHATSAPP_VERIFY_TOKEN',
        'WHATSAPP_TEMPLATE_NAME',
      ],
      'WhatsApp',
      4,
    ),
  );
  problems.push(...incompleteChannel(raw, ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'], 'Twilio SMS', 3));
  return problems;
}

/**
 * A channel is enabled by setting any of its variables; then the first `required` of them must
 * all be set, so a half-configured channel stops start-up instead of failing on the first message.
 */
function incompleteChannel(raw: RawEnv, names: ReadonlyArray<keyof RawEnv>, channel: string, required: number) {
  const set = names.filter((name) => raw[name] !== undefined);
  if (set.length === 0) return [];
  return names
    .slice(0, required)
    .filter((name) => raw[name] === undefined)
    .map((name) => ({ variable: name, message: `is required because ${channel} is enabled (${set.join(', ')} set)` }));
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
