import type { PhoneRegion } from '../core/phone.ts';
import { MODEL_OUTAGE_NOTICE } from '../engine/turn-runner.ts';
import { ConfigError } from './config-error.ts';
import { CONFIG_VARIABLES } from './variables.ts';
import { OPENAI_BASE_URL, readLegacyNames } from './legacy-names.ts';
import { crossFieldProblems, envSchema, type ParsedEnv, type RawEnv } from './schema.ts';
import type { CLOCK_MODES, LLM_PROVIDERS, LOG_LEVELS } from './schema.ts';
import type { CronSchedule } from './rules.ts';

export { CONFIG_VARIABLES, configTableMarkdown, envExample, type ConfigVariable } from './variables.ts';
export { loadDotEnv } from './dotenv.ts';
export { ConfigError } from './config-error.ts';

export type LlmProviderName = (typeof LLM_PROVIDERS)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type ClockMode = (typeof CLOCK_MODES)[number];

/** The most past messages ever sent to the model with a turn. */
export const MAX_CHAT_HISTORY = 50;
/** How long after a daily prompt the participant is moved to feedback, when that is enabled. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
export const OFFLINE_MODEL = 'offline-demo';

/** The validated, deeply frozen configuration; nothing else reads the environment. */
export interface AppConfig {
  readonly server: {
    readonly host: string;
    /** 0 = any free port. */
    readonly port: number;
    readonly apiToken: string | undefined;
    readonly maxBodyBytes: number;
    readonly shutdownTimeoutMs: number;
    /** Browser origins allowed to call the API (CORS) and open the WebSocket; empty = same origin only. */
    readonly corsOrigins: readonly string[];
    /** `/metrics` without the API token. */
    readonly metricsPublic: boolean;
    /** Signs tickets and client tokens (derived from `apiToken` when unset). */
    readonly tokenSecret: string | undefined;
  };
  /** Both undefined with `RATE_LIMITS=off`. */
  readonly limits: {
    /** Failed authentications per client address per window. */
    readonly authFailures: RateLimit | undefined;
    /** Model turns a conversation's messages may start per window. */
    readonly turns: RateLimit | undefined;
  };
  readonly database: {
    readonly url: string;
    readonly schema: string;
    readonly poolMax: number;
    /** PostgreSQL: opening a connection or waiting for a free one. */
    readonly connectTimeoutMs: number;
    /** PostgreSQL: one statement (server-side), plus a grace period client-side. */
    readonly queryTimeoutMs: number;
    /** SQLite: how long a write retries while another process holds the lock. */
    readonly busyTimeoutMs: number;
  };
  readonly llm: {
    readonly provider: LlmProviderName;
    /** Set whenever `provider` is `openai`. */
    readonly baseUrl: string | undefined;
    readonly apiKey: string | undefined;
    readonly model: string;
    /** The service desk's interpreter; undefined = `model`. */
    readonly interpreterModel: string | undefined;
    /** Embeddings for the assistant's semantic recall, on `baseUrl`; undefined = text search alone. */
    readonly embeddingModel: string | undefined;
    /** Reply calls' sampling temperature; undefined = the provider's default. */
    readonly temperature: number | undefined;
    readonly timeoutMs: number;
    readonly maxRetries: number;
    /** Told once per model outage to each conversation whose message waits; undefined = nothing. */
    readonly outageNotice: string | undefined;
    /** Tool calls run per model response and per turn, in every flow; the rest are answered with an error. */
    readonly toolCallLimits: { readonly perResponse: number; readonly perTurn: number };
  };
  readonly conversation: {
    /** Past messages to send with a turn, already normalised to 0..50. */
    readonly chatHistoryLimit: number;
    readonly autoEnrollNewUsers: boolean;
    /** National-format phone numbers are read in this region; undefined = international only. */
    readonly phoneRegion: PhoneRegion | undefined;
    /** Global debug mode (`PROMPTPIPE_DEBUG`). */
    readonly debug: boolean;
  };
  readonly habit: {
    /** Override files for the system prompts; undefined = the shipped prompt. */
    readonly promptFiles: {
      readonly intake: string | undefined;
      readonly feedback: string | undefined;
      readonly generator: string | undefined;
    };
    readonly prepMinutes: number;
    /** In ms; 0 disables that timer. */
    readonly delays: {
      readonly reminderMs: number;
      readonly autoFeedbackMs: number;
      readonly feedbackInitialMs: number;
      readonly feedbackFollowupMs: number;
    };
  };
  readonly study: {
    /** The IANA zone whose calendar days the overview's per-day series counts in. */
    readonly timeZone: string;
  };
  /** The Go PromptPipe's platform routes (`/send`, `/schedule`, …). */
  readonly platform: {
    /** What `POST /schedule` uses when a request has no schedule; undefined = such a request is refused. */
    readonly defaultSchedule: CronSchedule | undefined;
    /** Path of the module that writes `custom` prompts (loaded at start-up); undefined = they are refused. */
    readonly customGenerator: string | undefined;
  };
  readonly assistant: {
    /** Undefined = the shipped profiles. */
    readonly profilesDir: string | undefined;
    readonly defaultProfile: string;
    readonly location: string;
    readonly recentWindowMs: number;
    readonly recentMaxMessages: number;
    readonly maxModelCalls: number;
    readonly recallMaxResults: number;
    /** Semantic recall's cut-off (cosine similarity). */
    readonly recallMinSimilarity: number;
    readonly helperTimeoutMs: number;
    readonly mcpConfigFile: string | undefined;
  };
  readonly desk: {
    /** The BCP 47 locale the service desk says amounts, dates and times in (`DESK_LOCALE`). */
    readonly locale: string;
    /** The business's IANA zone: its today, and the zone appointment times are local to and said in. */
    readonly timeZone: string;
  };
  readonly clock: {
    readonly mode: ClockMode;
    /** Start of the virtual clock; undefined = the time the server starts. */
    readonly start: Date | undefined;
  };
  readonly outbound: {
    readonly webhookUrl: string | undefined;
    /** The HMAC key outbound webhooks are signed with (decoded from `whsec_…`); undefined = unsigned. */
    readonly webhookSigningKey: Buffer | undefined;
    readonly maxAttempts: number;
    readonly concurrency: number;
  };
  /** Undefined when the channel is not configured. */
  readonly whatsapp:
    | {
        readonly accessToken: string;
        readonly phoneNumberId: string;
        readonly appSecret: string;
        readonly verifyToken: string;
        readonly apiBaseUrl: string;
        readonly template:
          { readonly name: string; readonly language: string; readonly textLength: number } | undefined;
      }
    | undefined;
  readonly twilio:
    | {
        readonly accountSid: string;
        readonly authToken: string;
        readonly from: string;
        readonly apiBaseUrl: string;
        readonly publicBaseUrl: string | undefined;
      }
    | undefined;
  readonly log: { readonly level: LogLevel; readonly redact: boolean };
  /** OpenTelemetry traces; undefined = off (no OTLP endpoint set). */
  readonly tracing: TracingConfig | undefined;
  /** Said once at start-up: Go PromptPipe names read as ours, names that look like ours but are not. */
  readonly warnings: readonly string[];
}

export interface TracingConfig {
  /** Where spans are POSTed (OTLP/HTTP, JSON). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
}

export interface RateLimit {
  readonly limit: number;
  readonly windowMs: number;
}

/** `CHAT_HISTORY_LIMIT` → how many past messages to send: -1 = all of the last 50, 0 = none, N = min(N, 50). */
export function normaliseHistoryLimit(limit: number): number {
  return limit < 0 ? MAX_CHAT_HISTORY : Math.min(limit, MAX_CHAT_HISTORY);
}

/** Known variables only, trimmed, empty = unset, then the defaults of `CONFIG_VARIABLES`. */
function withDefaults(env: Record<string, string | undefined>): RawEnv {
  const raw: Record<string, string> = {};
  for (const variable of CONFIG_VARIABLES) {
    const value = env[variable.name]?.trim() || variable.default;
    if (value !== undefined) raw[variable.name] = value;
  }
  return raw as RawEnv;
}

const order = (line: string) => CONFIG_VARIABLES.findIndex((variable) => line.split(/[ :]/)[0] === variable.name);

/** Parses and validates the environment once; throws a `ConfigError` naming every bad variable. */
export function loadConfig(given: Record<string, string | undefined>): AppConfig {
  const { env, readFrom, warnings } = readLegacyNames(given);
  const raw = withDefaults(env);
  const parsed = envSchema.safeParse(raw);
  // A value that came from a Go name is reported under the name that was set too.
  const named = (variable: string) => (readFrom[variable] ? `${variable} (read from ${readFrom[variable]})` : variable);
  const invalid = parsed.success ? [] : parsed.error.issues;
  const issues = invalid.map((issue) => `${named(issue.path.join('.'))}: ${issue.message}`);
  // A variable already rejected on its own is not also reported for how it combines with others.
  const rejected = new Set(invalid.map((issue) => issue.path.join('.')));
  issues.push(
    ...crossFieldProblems(raw)
      .filter((problem) => !rejected.has(problem.variable))
      .map((problem) => `${named(problem.variable)}: ${problem.message}`),
  );
  if (issues.length > 0 || !parsed.success) throw new ConfigError(issues.sort((a, b) => order(a) - order(b)));
  return deepFreeze({ ...toAppConfig(parsed.data), warnings });
}

function toAppConfig(env: ParsedEnv): Omit<AppConfig, 'warnings'> {
  // A key alone means OpenAI itself: never the offline model.
  const provider = env.LLM_PROVIDER ?? (env.LLM_BASE_URL || env.LLM_API_KEY ? 'openai' : 'offline');
  return {
    server: {
      host: env.HOST,
      port: env.PORT,
      apiToken: env.API_TOKEN,
      maxBodyBytes: env.MAX_BODY_BYTES,
      shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
      corsOrigins: env.CORS_ORIGINS ?? [],
      metricsPublic: env.METRICS_PUBLIC,
      tokenSecret: env.TOKEN_SECRET,
    },
    limits: {
      authFailures:
        env.RATE_LIMITS === 'on' ? { limit: env.AUTH_FAILURE_LIMIT, windowMs: env.AUTH_FAILURE_WINDOW } : undefined,
      turns: env.RATE_LIMITS === 'on' ? { limit: env.TURN_RATE_LIMIT, windowMs: env.TURN_RATE_WINDOW } : undefined,
    },
    database: {
      url: env.DATABASE_URL,
      schema: env.DATABASE_SCHEMA,
      poolMax: env.DATABASE_POOL_MAX,
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      queryTimeoutMs: env.DATABASE_QUERY_TIMEOUT_MS,
      busyTimeoutMs: env.SQLITE_BUSY_TIMEOUT_MS,
    },
    llm: {
      provider,
      baseUrl: env.LLM_BASE_URL ?? (provider === 'openai' ? OPENAI_BASE_URL : undefined),
      apiKey: env.LLM_API_KEY,
      model: env.LLM_MODEL ?? (provider === 'openai' ? DEFAULT_OPENAI_MODEL : OFFLINE_MODEL),
      interpreterModel: env.LLM_INTERPRETER_MODEL,
      embeddingModel: env.LLM_EMBEDDING_MODEL,
      temperature: env.LLM_TEMPERATURE,
      timeoutMs: env.LLM_TIMEOUT_MS,
      maxRetries: env.LLM_MAX_RETRIES,
      toolCallLimits: { perResponse: env.LLM_MAX_TOOL_CALLS_PER_RESPONSE, perTurn: env.LLM_MAX_TOOL_CALLS_PER_TURN },
      outageNotice: outageNotice(env.MODEL_OUTAGE_NOTICE),
    },
    conversation: {
      chatHistoryLimit: normaliseHistoryLimit(env.CHAT_HISTORY_LIMIT),
      autoEnrollNewUsers: env.AUTO_ENROLL_NEW_USERS,
      phoneRegion: env.DEFAULT_PHONE_REGION,
      debug: env.PROMPTPIPE_DEBUG,
    },
    habit: {
      promptFiles: {
        intake: env.INTAKE_BOT_PROMPT_FILE,
        feedback: env.FEEDBACK_TRACKER_PROMPT_FILE,
        generator: env.PROMPT_GENERATOR_PROMPT_FILE,
      },
      prepMinutes: env.SCHEDULER_PREP_TIME_MINUTES,
      delays: {
        reminderMs: env.DAILY_PROMPT_REMINDER_DELAY,
        autoFeedbackMs: env.AUTO_FEEDBACK_AFTER_PROMPT_ENABLED ? env.AUTO_FEEDBACK_DELAY : 0,
        feedbackInitialMs: env.FEEDBACK_INITIAL_TIMEOUT,
        feedbackFollowupMs: env.FEEDBACK_FOLLOWUP_DELAY,
      },
    },
    study: { timeZone: env.STUDY_TIMEZONE },
    platform: { defaultSchedule: env.PLATFORM_DEFAULT_SCHEDULE, customGenerator: env.PLATFORM_CUSTOM_GENERATOR },
    assistant: {
      profilesDir: env.ASSISTANT_PROFILES_DIR,
      defaultProfile: env.ASSISTANT_DEFAULT_PROFILE,
      location: env.ASSISTANT_LOCATION,
      recentWindowMs: env.ASSISTANT_RECENT_WINDOW,
      recentMaxMessages: env.ASSISTANT_RECENT_MAX_MESSAGES,
      maxModelCalls: env.ASSISTANT_MAX_MODEL_CALLS,
      recallMaxResults: env.ASSISTANT_RECALL_MAX_RESULTS,
      recallMinSimilarity: env.ASSISTANT_RECALL_MIN_SIMILARITY,
      helperTimeoutMs: env.ASSISTANT_HELPER_TIMEOUT_MS,
      mcpConfigFile: env.MCP_CONFIG_FILE,
    },
    desk: { locale: env.DESK_LOCALE, timeZone: env.DESK_TIME_ZONE },
    clock: { mode: env.CLOCK, start: env.CLOCK_START },
    outbound: {
      webhookUrl: env.OUTBOUND_WEBHOOK_URL,
      webhookSigningKey: env.OUTBOUND_WEBHOOK_SECRET,
      maxAttempts: env.OUTBOUND_MAX_ATTEMPTS,
      concurrency: env.OUTBOUND_CONCURRENCY,
    },
    whatsapp: env.WHATSAPP_ACCESS_TOKEN
      ? {
          accessToken: env.WHATSAPP_ACCESS_TOKEN,
          phoneNumberId: env.WHATSAPP_PHONE_NUMBER_ID!,
          appSecret: env.WHATSAPP_APP_SECRET!,
          verifyToken: env.WHATSAPP_VERIFY_TOKEN!,
          apiBaseUrl: env.WHATSAPP_API_BASE_URL.replace(/\/+$/, ''),
          template: env.WHATSAPP_TEMPLATE_NAME
            ? {
                name: env.WHATSAPP_TEMPLATE_NAME,
                language: env.WHATSAPP_TEMPLATE_LANGUAGE,
                textLength: env.WHATSAPP_TEMPLATE_TEXT_LENGTH,
              }
            : undefined,
        }
      : undefined,
    twilio: env.TWILIO_ACCOUNT_SID
      ? {
          accountSid: env.TWILIO_ACCOUNT_SID,
          authToken: env.TWILIO_AUTH_TOKEN!,
          from: env.TWILIO_FROM!,
          apiBaseUrl: env.TWILIO_API_BASE_URL.replace(/\/+$/, ''),
          publicBaseUrl: env.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
        }
      : undefined,
    log: { level: env.LOG_LEVEL, redact: env.LOG_REDACT },
    tracing: tracingOf(env),
  };
}

function deepFreeze<T>(value: T): T {
  // A Buffer (a signing key) cannot be frozen; it stays as parsed.
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The OTLP traces URL: the signal-specific variable as is, else `/v1/traces` on the base (the spec's rule). */
function tracingOf(env: ParsedEnv): TracingConfig | undefined {
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (env.OTEL_EXPORTER_OTLP_ENDPOINT && `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  if (!url) return undefined;
  return { url, headers: env.OTEL_EXPORTER_OTLP_HEADERS ?? {}, serviceName: env.OTEL_SERVICE_NAME };
}

/** `MODEL_OUTAGE_NOTICE`: `on` is the shipped wording, `off` none, anything else the text itself. */
function outageNotice(value: string): string | undefined {
  if (value === 'off') return undefined;
  return value === 'on' ? MODEL_OUTAGE_NOTICE : value;
}
