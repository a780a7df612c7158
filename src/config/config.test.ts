import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_VARIABLES,
  ConfigError,
  loadConfig,
  loadDotEnv,
  normaliseHistoryLimit,
  type AppConfig,
} from './config.ts';
import { envSchema } from './schema.ts';
import { MODEL_OUTAGE_NOTICE } from '../engine/turn-runner.ts';

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error(`expected ${JSON.stringify(env)} to be rejected`);
}

describe('loadConfig defaults', () => {
  it('gives a complete config from an empty environment', () => {
    expect(loadConfig({})).toEqual({
      server: {
        host: '127.0.0.1',
        port: 8080,
        apiToken: undefined,
        maxBodyBytes: 262144,
        shutdownTimeoutMs: 10000,
        tokenSecret: undefined,
        corsOrigins: [],
        metricsPublic: false,
      },
      limits: { authFailures: { limit: 20, windowMs: 60_000 }, turns: { limit: 10, windowMs: 60_000 } },
      database: {
        url: 'sqlite:./data/promptpipe.sqlite',
        schema: 'public',
        poolMax: 10,
        connectTimeoutMs: 5000,
        queryTimeoutMs: 10000,
        busyTimeoutMs: 5000,
      },
      llm: {
        provider: 'offline',
        baseUrl: undefined,
        apiKey: undefined,
        model: 'offline-demo',
        interpreterModel: undefined,
        embeddingModel: undefined,
        temperature: undefined,
        timeoutMs: 60000,
        maxRetries: 2,
        toolCallLimits: { perResponse: 8, perTurn: 24 },
        outageNotice: MODEL_OUTAGE_NOTICE,
      },
      conversation: { chatHistoryLimit: 30, autoEnrollNewUsers: false, phoneRegion: undefined, debug: false },
      habit: {
        promptFiles: { intake: undefined, feedback: undefined, generator: undefined },
        prepMinutes: 10,
        delays: {
          reminderMs: 5 * 3_600_000,
          autoFeedbackMs: 5 * 60_000,
          feedbackInitialMs: 15 * 60_000,
          feedbackFollowupMs: 3 * 3_600_000,
        },
      },
      study: { timeZone: 'UTC' },
      platform: { defaultSchedule: undefined, customGenerator: undefined },
      assistant: {
        profilesDir: undefined,
        defaultProfile: 'life',
        location: 'Unknown',
        recentWindowMs: 5 * 60_000,
        recentMaxMessages: 20,
        maxModelCalls: 8,
        recallMaxResults: 10,
        recallMinSimilarity: 0.3,
        helperTimeoutMs: 5000,
        mcpConfigFile: undefined,
      },
      desk: { locale: 'en-US', timeZone: 'America/Los_Angeles' },
      clock: { mode: 'system', start: undefined },
      outbound: { webhookUrl: undefined, webhookSigningKey: undefined, maxAttempts: 8, concurrency: 16 },
      whatsapp: undefined,
      twilio: undefined,
      log: { level: 'info', redact: true },
      tracing: undefined,
      warnings: [],
    } satisfies AppConfig);
  });

  it('turns tracing on with an OTLP endpoint, and names the variable of each bad value', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }).tracing).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      headers: {},
      serviceName: 'promptpipe',
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9999/traces',
        OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc, x-team=pp',
        OTEL_SERVICE_NAME: 'pp-study',
      }).tracing,
    ).toEqual({
      url: 'http://127.0.0.1:9999/traces',
      headers: { authorization: 'Bearer abc', 'x-team': 'pp' },
      serviceName: 'pp-study',
    });
    const problems = problemsOf;
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL (got "grpc://collector:4317")',
    ]);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http/json (got "grpc")',
    ]);
    const secret = 'authorization=Bearer sec%ret';
    const bad = problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_EXPORTER_OTLP_HEADERS: secret });
    expect(bad).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS: must be key=value pairs separated by commas, values percent-encoded (pair 1 is not)',
    ]);
    expect(bad.join()).not.toContain('sec');
    expect(problems({ OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toEqual([
      'OTEL_EXPORTER_OTLP_HEADERS: only applies with OTEL_EXPORTER_OTLP_ENDPOINT or ' +
        'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (tracing is off)',
    ]);
  });

  const SID = 'AC' + 'a1'.repeat(16);
  it('enables a channel by its variables, and a half-configured channel stops start-up naming what is missing', () => {
    const config = loadConfig({
      WHATSAPP_ACCESS_TOKEN: 'EAAG-token',
      WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
      WHATSAPP_APP_SECRET: 'app-secret-1',
      WHATSAPP_VERIFY_TOKEN: 'verify-me',
      WHATSAPP_API_BASE_URL: 'http://127.0.0.1:9/v23.0/',
      WHATSAPP_TEMPLATE_NAME: 'daily_prompt',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: 'twilio-token',
      TWILIO_FROM: '+15005550006',
      PUBLIC_BASE_URL: 'https://pp.example.org/',
    });
    expect(config.whatsapp).toMatchObject({
      phoneNumberId: '106540352242922',
      apiBaseUrl: 'http://127.0.0.1:9/v23.0',
      template: { name: 'daily_prompt', language: 'en_US' },
    });
    expect(config.twilio).toMatchObject({
      accountSid: SID,
      from: '+15005550006',
      apiBaseUrl: 'https://api.twilio.com',
      publicBaseUrl: 'https://pp.example.org',
    });

    expect(() => loadConfig({ WHATSAPP_ACCESS_TOKEN: 'EAAG-token', WHATSAPP_PHONE_NUMBER_ID: '1065' })).toThrow(
      new RegExp(
        String.raw`WHATSAPP_APP_SECRET: is required because WhatsApp is enabled \(WHATSAPP_ACCESS_TOKEN, ` +
          String.raw`WHATSAPP_PHONE_NUMBER_ID set\)[\s\S]*WHATSAPP_VERIFY_TOKEN: is required`,
      ),
    );
    expect(() => loadConfig({ TWILIO_FROM: '+15005550006' })).toThrow(
      /TWILIO_ACCOUNT_SID: is required because Twilio SMS is enabled[\s\S]*TWILIO_AUTH_TOKEN: is required/,
    );
    expect(() =>
      loadConfig({ TWILIO_ACCOUNT_SID: 'AC123', TWILIO_AUTH_TOKEN: 'twilio-token', TWILIO_FROM: '5550006' }),
    ).toThrow(/TWILIO_ACCOUNT_SID: must be AC followed by 32 hex digits[\s\S]*TWILIO_FROM: must be an E.164 number/);
    expect(
      loadConfig({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'twilio-token', TWILIO_FROM: 'MG' + 'b2'.repeat(16) })
        .twilio?.from,
    ).toMatch(/^MG/);
  });

  it('treats empty and blank strings as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '  ', API_TOKEN: '' })).toEqual(loadConfig({}));
  });

  it('reads every kind of value', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '0',
      API_TOKEN: 'x'.repeat(16),
      DATABASE_URL: 'postgresql://u:p@db:5432/pp',
      DATABASE_SCHEMA: 'study_1',
      AUTO_ENROLL_NEW_USERS: 'YES',
      PROMPTPIPE_DEBUG: '1',
      LOG_REDACT: 'no',
      LOG_LEVEL: 'silent',
      DAILY_PROMPT_REMINDER_DELAY: '0',
      AUTO_FEEDBACK_AFTER_PROMPT_ENABLED: 'false',
      OUTBOUND_WEBHOOK_URL: 'https://example.org/hook',
      CLOCK: 'virtual',
      CLOCK_START: '2026-06-01T12:00:00Z',
      INTAKE_BOT_PROMPT_FILE: './intake.txt',
      UNRELATED: 'ignored',
    });
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 0, apiToken: 'x'.repeat(16) });
    expect(config.database).toMatchObject({ url: 'postgresql://u:p@db:5432/pp', schema: 'study_1', poolMax: 10 });
    expect(
      loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '2500', DATABASE_CONNECT_TIMEOUT_MS: '750', SQLITE_BUSY_TIMEOUT_MS: '0' })
        .database,
    ).toMatchObject({ queryTimeoutMs: 2500, connectTimeoutMs: 750, busyTimeoutMs: 0 });
    expect(config.conversation).toMatchObject({ autoEnrollNewUsers: true, debug: true });
    expect(config.log).toEqual({ level: 'silent', redact: false });
    expect(config.habit.delays).toMatchObject({ reminderMs: 0, autoFeedbackMs: 0 });
    expect(config.habit.promptFiles.intake).toBe('./intake.txt');
    expect(config.outbound.webhookUrl).toBe('https://example.org/hook');
    expect(config.clock).toEqual({ mode: 'virtual', start: new Date('2026-06-01T12:00:00Z') });
  });

  it('accepts the database URL forms', () => {
    for (const url of ['sqlite::memory:', 'sqlite:/tmp/x.sqlite', 'postgres://postgres@127.0.0.1:5432/test']) {
      expect(loadConfig({ DATABASE_URL: url }).database.url).toBe(url);
    }
  });

  it('returns a deeply frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
    expect(Object.isFrozen(config.habit.delays)).toBe(true);
    expect(() => {
      (config.server as { port: number }).port = 1;
    }).toThrow(TypeError);
  });
});

describe('loadConfig LLM provider', () => {
  it('defaults to offline without LLM_BASE_URL and to openai with it', () => {
    expect(loadConfig({}).llm).toMatchObject({ provider: 'offline', model: 'offline-demo' });
    expect(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_API_KEY: 'k' }).llm).toEqual({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: 'k',
      model: 'gpt-4o-mini',
      interpreterModel: undefined,
      temperature: undefined,
      timeoutMs: 60000,
      maxRetries: 2,
      toolCallLimits: { perResponse: 8, perTurn: 24 },
      outageNotice: MODEL_OUTAGE_NOTICE,
    });
  });

  it('lets LLM_PROVIDER and LLM_MODEL override the defaults', () => {
    expect(loadConfig({ LLM_BASE_URL: 'https://api.example/v1', LLM_PROVIDER: 'offline' }).llm.provider).toBe(
      'offline',
    );
    expect(loadConfig({ LLM_BASE_URL: 'https://api.example/v1', LLM_MODEL: 'llama3.1' }).llm.model).toBe('llama3.1');
  });

  it(
    'reads STUDY_TIMEZONE in any case as its canonical spelling, UTC by default, ' +
      'and names a zone it does not know',
    () => {
      expect(loadConfig({}).study.timeZone).toBe('UTC');
      expect(loadConfig({ STUDY_TIMEZONE: 'america/toronto' }).study.timeZone).toBe('America/Toronto');
      expect(() => loadConfig({ STUDY_TIMEZONE: 'Toronto' })).toThrow(
        /STUDY_TIMEZONE: must be an IANA time zone such as UTC or America\/Toronto \(got "Toronto"\)/,
      );
    },
  );

  it('reads DESK_LOCALE as its canonical tag and DESK_TIME_ZONE in any case, and names what it cannot use', () => {
    expect(loadConfig({ DESK_LOCALE: 'de-de', DESK_TIME_ZONE: 'europe/berlin' }).desk).toEqual({
      locale: 'de-DE',
      timeZone: 'Europe/Berlin',
    });
    expect(loadConfig({ DESK_LOCALE: 'en-GB' }).desk.locale).toBe('en-GB');
    expect(() => loadConfig({ DESK_LOCALE: 'German' })).toThrow(
      'DESK_LOCALE: must be a BCP 47 language tag this runtime formats for, such as en-US, de-DE or en-GB ' +
        '(got "German")',
    );
    expect(() => loadConfig({ DESK_TIME_ZONE: 'Pacific Time' })).toThrow(
      /DESK_TIME_ZONE: must be an IANA time zone such as UTC or America\/Toronto \(got "Pacific Time"\)/,
    );
  });

  it('reads DEFAULT_PHONE_REGION in any case, and names a region it does not know', () => {
    expect(loadConfig({ DEFAULT_PHONE_REGION: 'gb' }).conversation.phoneRegion).toBe('GB');
    expect(() => loadConfig({ DEFAULT_PHONE_REGION: 'USA' })).toThrow(
      /DEFAULT_PHONE_REGION: must be a two-letter region code such as US or GB \(got "USA"\)/,
    );
  });

  it('reads the tool-call limits', () => {
    expect(
      loadConfig({ LLM_MAX_TOOL_CALLS_PER_RESPONSE: '3', LLM_MAX_TOOL_CALLS_PER_TURN: '5' }).llm.toolCallLimits,
    ).toEqual({ perResponse: 3, perTurn: 5 });
  });

  it('rejects openai without LLM_BASE_URL or LLM_API_KEY, naming them', () => {
    const [problem] = problemsOf({ LLM_PROVIDER: 'openai' });
    expect(problem).toMatch(/^LLM_PROVIDER: .*LLM_BASE_URL.*LLM_API_KEY/);
  });

  it('takes a key alone as OpenAI itself, never the offline model', () => {
    expect(loadConfig({ LLM_API_KEY: 'sk-test' }).llm).toMatchObject({
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-test',
    });
    expect(loadConfig({ LLM_TEMPERATURE: '0.3' }).llm.temperature).toBe(0.3);
    expect(problemsOf({ LLM_TEMPERATURE: '3' })[0]).toMatch(/^LLM_TEMPERATURE: must be a number from 0 to 2/);
  });
});

describe('loadConfig errors', () => {
  const bad: Array<[string, string]> = [
    ['HOST', 'my host'],
    ['PORT', 'abc'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['API_TOKEN', 'short'],
    ['MAX_BODY_BYTES', '0'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'sqlite:'],
    ['DATABASE_SCHEMA', 'drop table;'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '0'],
    ['DATABASE_QUERY_TIMEOUT_MS', '10s'],
    ['SQLITE_BUSY_TIMEOUT_MS', '-1'],
    ['LLM_PROVIDER', 'anthropic'],
    ['LLM_BASE_URL', 'ftp://x'],
    ['LLM_BASE_URL', 'not a url'],
    ['LLM_MODEL', 'a b'],
    ['LLM_TIMEOUT_MS', '0'],
    ['LLM_MAX_RETRIES', '11'],
    ['CHAT_HISTORY_LIMIT', '-2'],
    ['LLM_MAX_TOOL_CALLS_PER_RESPONSE', '0'],
    ['LLM_MAX_TOOL_CALLS_PER_RESPONSE', '101'],
    ['LLM_MAX_TOOL_CALLS_PER_TURN', 'many'],
    ['LLM_MAX_TOOL_CALLS_PER_TURN', '1001'],
    ['AUTO_ENROLL_NEW_USERS', 'maybe'],
    ['PROMPTPIPE_DEBUG', 'on'],
    ['SCHEDULER_PREP_TIME_MINUTES', '1441'],
    ['DAILY_PROMPT_REMINDER_DELAY', '5 hours'],
    ['AUTO_FEEDBACK_AFTER_PROMPT_ENABLED', 'y'],
    ['FEEDBACK_INITIAL_TIMEOUT', '15'],
    ['FEEDBACK_FOLLOWUP_DELAY', '-3h'],
    ['CLOCK', 'fake'],
    ['OUTBOUND_WEBHOOK_URL', 'example.org'],
    ['OUTBOUND_MAX_ATTEMPTS', '0'],
    ['OUTBOUND_WEBHOOK_SECRET', 'short'],
    ['OUTBOUND_WEBHOOK_SECRET', 'whsec_not base64!'],
    ['OUTBOUND_WEBHOOK_SECRET', 'whsec_c2hvcnQ='],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_REDACT', 'nope'],
    ['ASSISTANT_DEFAULT_PROFILE', 'my profile'],
    ['ASSISTANT_LOCATION', 'x'.repeat(201)],
    ['ASSISTANT_RECENT_WINDOW', '5 minutes'],
    ['ASSISTANT_RECENT_MAX_MESSAGES', '51'],
    ['ASSISTANT_MAX_MODEL_CALLS', '0'],
    ['ASSISTANT_RECALL_MAX_RESULTS', '101'],
    ['ASSISTANT_HELPER_TIMEOUT_MS', '0'],
    ['WHATSAPP_TEMPLATE_TEXT_LENGTH', '1001'],
    ['WHATSAPP_TEMPLATE_TEXT_LENGTH', 'ten'],
    ['CORS_ORIGINS', 'app.example.org'],
    ['CORS_ORIGINS', 'https://app.example.org/path'],
    ['METRICS_PUBLIC', 'yes please'],
    ['MODEL_OUTAGE_NOTICE', 'x'.repeat(501)],
    ['LLM_TEMPERATURE', 'warm'],
    ['DEFAULT_PHONE_REGION', 'Canada'],
    ['STUDY_TIMEZONE', 'Mars/Olympus_Mons'],
    ['STUDY_TIMEZONE', '+05:00'],
    ['DESK_LOCALE', 'en_US'],
    ['DESK_LOCALE', 'en-US,de-DE'],
    ['DESK_LOCALE', 'xx-YY'],
    ['DESK_TIME_ZONE', 'Mars/Olympus_Mons'],
    ['DESK_TIME_ZONE', '-08:00'],
    ['ASSISTANT_RECALL_MIN_SIMILARITY', '1.5'],
    ['LLM_EMBEDDING_MODEL', 'two words'],
  ];

  it.each(bad)('%s=%j is rejected with a message naming the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}: must be `));
  });

  it('takes an embeddings model only with an OpenAI-compatible endpoint', () => {
    const config = loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_EMBEDDING_MODEL: 'nomic-embed-text' });
    expect(config.llm).toMatchObject({ embeddingModel: 'nomic-embed-text', baseUrl: 'http://127.0.0.1:11434/v1' });
    expect(loadConfig({ ASSISTANT_RECALL_MIN_SIMILARITY: '0.55' }).assistant.recallMinSimilarity).toBe(0.55);
    for (const env of [
      { LLM_EMBEDDING_MODEL: 'text-embedding-3-small' },
      { LLM_EMBEDDING_MODEL: 'text-embedding-3-small', LLM_API_KEY: 'sk-x', LLM_PROVIDER: 'offline' },
    ])
      expect(problemsOf(env)).toEqual([
        expect.stringMatching(/^LLM_EMBEDDING_MODEL: needs an OpenAI-compatible endpoint \(LLM_BASE_URL/),
      ]);
  });

  it('rejects a CLOCK_START that is not a date-time, or without CLOCK=virtual', () => {
    expect(problemsOf({ CLOCK: 'virtual', CLOCK_START: 'tomorrow' })).toEqual([
      expect.stringMatching(/^CLOCK_START: must be an ISO 8601/),
    ]);
    expect(problemsOf({ CLOCK_START: '2026-06-01T12:00:00Z' })).toEqual([
      expect.stringMatching(/^CLOCK_START: only applies with CLOCK=virtual/),
    ]);
    expect(problemsOf({ HOST: '0.0.0.0' })).toEqual([
      expect.stringMatching(/^HOST: is "0.0.0.0", reachable from other machines, but API_TOKEN is not set/),
    ]);
    expect(loadConfig({ HOST: '0.0.0.0', API_TOKEN: 'x'.repeat(16) }).server.host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: 'localhost' }).server.host).toBe('localhost');
  });

  it(
    'reads the access settings: limits, their off switch (loopback only), the token secret (only with ' + 'API_TOKEN)',
    () => {
      const config = loadConfig({
        API_TOKEN: 'a'.repeat(16),
        TOKEN_SECRET: 's'.repeat(32),
        AUTH_FAILURE_LIMIT: '5',
        AUTH_FAILURE_WINDOW: '30s',
        TURN_RATE_LIMIT: '3',
        TURN_RATE_WINDOW: '500ms',
      });
      expect([config.server.tokenSecret, config.limits]).toEqual([
        's'.repeat(32),
        { authFailures: { limit: 5, windowMs: 30_000 }, turns: { limit: 3, windowMs: 500 } },
      ]);
      expect(loadConfig({ RATE_LIMITS: 'off' }).limits).toEqual({ authFailures: undefined, turns: undefined });
      expect(problemsOf({ HOST: '0.0.0.0', API_TOKEN: 'a'.repeat(16), RATE_LIMITS: 'off' })).toEqual([
        expect.stringMatching(/^RATE_LIMITS: may be off only on a loopback HOST/),
      ]);
      expect(problemsOf({ TOKEN_SECRET: 's'.repeat(32) })).toEqual([
        expect.stringMatching(/^TOKEN_SECRET: only applies with API_TOKEN/),
      ]);
      expect(problemsOf({ API_TOKEN: 'a'.repeat(16), TOKEN_SECRET: 'short' })).toEqual([
        'TOKEN_SECRET: must be at least 32 characters (got 5)',
      ]);
      expect(problemsOf({ TURN_RATE_WINDOW: '0', AUTH_FAILURE_LIMIT: '0' })).toEqual([
        'AUTH_FAILURE_LIMIT: must be an integer from 1 to 1000000 (got "0")',
        'TURN_RATE_WINDOW: must be a duration greater than 0, like 1m, 30s or 500ms (got "0")',
      ]);
    },
  );

  it('says what it expected and what it got', () => {
    expect(problemsOf({ PORT: 'abc' })).toEqual([
      'PORT: must be an integer from 1 to 65535, or 0 for any free port (got "abc")',
    ]);
    expect(problemsOf({ LOG_LEVEL: 'verbose' })).toEqual([
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
    ]);
  });

  it('never echoes a secret or a database password', () => {
    expect(problemsOf({ API_TOKEN: 'hunter2' })).toEqual(['API_TOKEN: must be at least 16 characters (got 7)']);
    expect(problemsOf({ OUTBOUND_WEBHOOK_SECRET: 'hunter2' })).toEqual([
      'OUTBOUND_WEBHOOK_SECRET: must be at least 16 characters (got 7), or whsec_ followed by base64',
    ]);
    expect(problemsOf({ DATABASE_URL: 'mysql://u:s3cret@db/x' })).toEqual([
      'DATABASE_URL: must be sqlite:<path>, sqlite::memory: or a postgres:// or postgresql:// URL (got ' +
        '"mysql://u:***@db/x")',
    ]);
  });

  it('reports every problem at once, in the order of CONFIG_VARIABLES', () => {
    const error = (() => {
      try {
        loadConfig({ LOG_LEVEL: 'loud', PORT: 'abc', LLM_PROVIDER: 'openai', CHAT_HISTORY_LIMIT: '-5' });
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.issues.map((issue) => issue.split(':')[0])).toEqual([
      'PORT',
      'LLM_PROVIDER',
      'CHAT_HISTORY_LIMIT',
      'LOG_LEVEL',
    ]);
    expect(error.message).toBe(error.issues.join('\n'));
  });
});

describe('CHAT_HISTORY_LIMIT', () => {
  it.each([
    ['-1', 50],
    ['0', 0],
    ['7', 7],
    ['50', 50],
    ['500', 50],
  ])('%s → %d messages', (raw, expected) => {
    expect(loadConfig({ CHAT_HISTORY_LIMIT: raw }).conversation.chatHistoryLimit).toBe(expected);
  });

  it('normalises directly too', () => {
    expect([-1, 0, 1, 49, 51].map(normaliseHistoryLimit)).toEqual([50, 0, 1, 49, 50]);
  });
});

describe('loadDotEnv', () => {
  const dir = mkdtempSync(join(tmpdir(), 'promptpipe-config-'));
  const file = join(dir, '.env');
  writeFileSync(
    file,
    [
      '# a comment',
      'PORT=9000',
      'HOST="0.0.0.0"',
      "LOG_LEVEL='debug'",
      'LLM_MODEL=from-file',
      'EMPTY_IN_ENV=file',
      '',
    ].join('\n'),
  );

  it('puts the real environment over the file, empty values counting as unset', () => {
    const merged = loadDotEnv(file, { PORT: '7000', EMPTY_IN_ENV: '', OTHER: 'x' });
    expect(merged).toMatchObject({
      PORT: '7000',
      HOST: '0.0.0.0',
      LOG_LEVEL: 'debug',
      LLM_MODEL: 'from-file',
      EMPTY_IN_ENV: 'file',
      OTHER: 'x',
    });
    expect(loadConfig({ ...merged, API_TOKEN: 'x'.repeat(16) }).server).toMatchObject({ host: '0.0.0.0', port: 7000 });
  });

  it('accepts a missing file and leaves its input alone', () => {
    const env = { PORT: '1' };
    const merged = loadDotEnv(join(dir, 'missing.env'), env);
    expect(merged).toEqual(env);
    expect(merged).not.toBe(env);
  });
});

describe('CONFIG_VARIABLES', () => {
  it('is exactly the set the schema validates', () => {
    expect(CONFIG_VARIABLES.map((variable) => variable.name).sort()).toEqual(Object.keys(envSchema.shape).sort());
  });

  it('matches .env.example both ways, with the same defaults', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const documented = new Map(
      [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((match) => [match[1]!, match[2]!]),
    );
    expect([...documented.keys()].sort()).toEqual(CONFIG_VARIABLES.map((variable) => variable.name).sort());
    for (const variable of CONFIG_VARIABLES)
      expect(documented.get(variable.name), variable.name).toBe(variable.default ?? '');
  });

  it('gives each default in a form loadConfig accepts', () => {
    const defaults = Object.fromEntries(
      CONFIG_VARIABLES.filter((variable) => variable.default !== undefined).map((variable) => [
        variable.name,
        variable.default,
      ]),
    );
    expect(loadConfig(defaults)).toEqual(loadConfig({}));
  });
});
