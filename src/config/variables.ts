/**
 * Every environment variable PromptPipe reads: the one list that `loadConfig`, `.env.example`
 * and the README's configuration table are checked against, so they cannot drift.
 */
export interface ConfigVariable {
  readonly name: string;
  /** The raw value used when the variable is unset or empty; undefined when there is none. */
  readonly default: string | undefined;
  /** How the default is chosen when it depends on other variables (shown instead of `default`). */
  readonly defaultNote?: string;
  readonly description: string;
  /** Never echoed in error messages or logs. */
  readonly secret?: boolean;
  readonly section: string;
}

const v = (
  section: string,
  name: string,
  defaultValue: string | undefined,
  description: string,
  extra: { defaultNote?: string; secret?: boolean } = {},
): ConfigVariable => ({ section, name, default: defaultValue, description, ...extra });

export const CONFIG_VARIABLES: readonly ConfigVariable[] = Object.freeze([
  v(
    'Server',
    'HOST',
    '127.0.0.1',
    'Address to listen on. Anything but loopback (127.x, ::1, localhost) requires API_TOKEN.',
  ),
  v('Server', 'PORT', '8080', 'TCP port, 1-65535 (0 = any free port, for tests).'),
  v(
    'Server',
    'API_TOKEN',
    undefined,
    'Bearer token every route but /health and /openapi.json requires; at least 16 characters. Unset = no auth ' +
      '(a warning is logged).',
    { secret: true },
  ),
  v(
    'Server',
    'MAX_BODY_BYTES',
    '262144',
    'Largest accepted request body or WebSocket frame, in bytes (the default fits the 32,000-character message ' +
      'limit in any script); a larger frame closes the socket with 1009.',
  ),
  v(
    'Server',
    'CORS_ORIGINS',
    undefined,
    'Web origins (comma-separated, e.g. https://app.example.org) whose browser apps may call the API and open ' +
      'the WebSocket; unset = none (same origin only).',
  ),
  v(
    'Server',
    'METRICS_PUBLIC',
    'false',
    'Serve GET /metrics (Prometheus) without the API token (true/false); keep it false unless only your ' +
      'scraper can reach the port.',
  ),
  v(
    'Server',
    'SHUTDOWN_TIMEOUT_MS',
    '10000',
    'How long shutdown waits for running turns and deliveries, in ms; 5 s after that the process exits even if ' +
      'the database does not answer. On SIGTERM the listener closes first, so new requests are refused at the ' +
      'socket (a load balancer sends them to another process); a message acknowledged but not yet answered is ' +
      'answered after the restart, or by another process on PostgreSQL.',
  ),

  v(
    'Access',
    'TOKEN_SECRET',
    undefined,
    'Key (at least 32 characters) that signs stream tickets and client tokens; every process of a deployment ' +
      'must share it. Only with API_TOKEN. Set it to rotate API_TOKEN without invalidating client tokens.',
    { defaultNote: 'derived from API_TOKEN', secret: true },
  ),
  v(
    'Access',
    'RATE_LIMITS',
    'on',
    'on, or off (no auth-failure or turn limits: tests and benchmarks); off is refused unless HOST is loopback.',
  ),
  v(
    'Access',
    'AUTH_FAILURE_LIMIT',
    '20',
    'Failed authentications per client IP (IPv6: per /64) per AUTH_FAILURE_WINDOW; beyond it every request ' +
      'from there gets 429 rate_limited with Retry-After until the window ends (per process).',
  ),
  v('Access', 'AUTH_FAILURE_WINDOW', '1m', 'The window of AUTH_FAILURE_LIMIT (duration like 1m, 30s; greater than 0).'),
  v(
    'Access',
    'TURN_RATE_LIMIT',
    '10',
    "Model turns a conversation's messages (one sender) may start per TURN_RATE_WINDOW (per process); messages " +
      'beyond it are kept and answered together in one turn when the window allows.',
  ),
  v('Access', 'TURN_RATE_WINDOW', '1m', 'The window of TURN_RATE_LIMIT (duration; greater than 0).'),

  v(
    'Database',
    'DATABASE_URL',
    'sqlite:./data/promptpipe.sqlite',
    'sqlite:<path>, sqlite::memory: or a postgres:// (postgresql://) URL.',
  ),
  v('Database', 'DATABASE_SCHEMA', 'public', 'PostgreSQL schema to use (letters, digits, underscores).'),
  v(
    'Database',
    'DATABASE_POOL_MAX',
    '10',
    "PostgreSQL connections per process (1-200); keep processes × this under the server's max_connections.",
  ),
  v(
    'Database',
    'DATABASE_CONNECT_TIMEOUT_MS',
    '5000',
    'PostgreSQL: how long opening a connection, or waiting for a free one, may take before the request fails ' +
      'with 503, in ms (100-600000).',
  ),
  v(
    'Database',
    'DATABASE_QUERY_TIMEOUT_MS',
    '10000',
    'PostgreSQL: how long one statement may run, in ms (100-600000). The server cancels it (statement_timeout) ' +
      'and ends a transaction left idle twice as long; the client abandons a connection that has not answered ' +
      '1 s later (a network that drops packets).',
  ),
  v(
    'Database',
    'SQLITE_BUSY_TIMEOUT_MS',
    '5000',
    'SQLite: how long a write waits, retrying without blocking the server, for a lock another process holds ' +
      'before the request fails with 503, in ms (0-600000).',
  ),

  v(
    'Model',
    'LLM_PROVIDER',
    undefined,
    'openai (any OpenAI-compatible endpoint) or offline (the deterministic offline demo model).',
    { defaultNote: 'openai when LLM_BASE_URL or LLM_API_KEY is set, else offline' },
  ),
  v(
    'Model',
    'LLM_BASE_URL',
    undefined,
    'Base URL of the OpenAI-compatible API, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1.',
    { defaultNote: 'https://api.openai.com/v1 when LLM_API_KEY is set' },
  ),
  v('Model', 'LLM_API_KEY', undefined, 'API key sent as a bearer token to LLM_BASE_URL (optional for local servers).', {
    secret: true,
  }),
  v('Model', 'LLM_MODEL', undefined, 'Model name passed to the provider.', {
    defaultNote: 'gpt-4o-mini for openai, offline-demo for offline',
  }),
  v('Model', 'LLM_TEMPERATURE', undefined, 'Sampling temperature of reply calls, 0-2 (short decision calls use 0).', {
    defaultNote: "the provider's default",
  }),
  v(
    'Model',
    'LLM_INTERPRETER_MODEL',
    undefined,
    "Model for short decision calls: the service desk's interpreter, the assistant's profile router and recall " +
      'extraction; replies use LLM_MODEL.',
    { defaultNote: 'LLM_MODEL' },
  ),
  v(
    'Model',
    'LLM_EMBEDDING_MODEL',
    undefined,
    'Embeddings model on the same OpenAI-compatible endpoint (LLM_BASE_URL), e.g. text-embedding-3-small: the ' +
      "assistant's recall then also finds by meaning (vectors kept in the database); unset = full-text search alone. " +
      'Needs LLM_BASE_URL or LLM_API_KEY.',
  ),
  v('Model', 'LLM_TIMEOUT_MS', '60000', 'Timeout of one model call, in ms.'),
  v('Model', 'LLM_MAX_RETRIES', '2', 'Retries of a failed model call (0-10).'),
  v(
    'Model',
    'MODEL_OUTAGE_NOTICE',
    'on',
    'While the model cannot be reached (refused, timeout, 429, 5xx) a message waits and its turn runs again with ' +
      "back-off, the conversation's later messages behind it; each waiting conversation is told once per outage. on " +
      '(the shipped wording: the model is unreachable and the message will be answered once it is back), off (say ' +
      'nothing), or your own text (at most 500 characters).',
  ),
  v(
    'Model',
    'LLM_MAX_TOOL_CALLS_PER_RESPONSE',
    '8',
    'Tool calls run from one model response (1-100); each call beyond is not run and answered with an error result.',
  ),
  v(
    'Model',
    'LLM_MAX_TOOL_CALLS_PER_TURN',
    '24',
    'Tool calls run in one turn, over all its model responses (1-1000); each call beyond is not run and ' +
      'answered with an error result.',
  ),

  v(
    'Conversation',
    'CHAT_HISTORY_LIMIT',
    '30',
    'Past messages sent to the model: N (at most 50), 0 = none, -1 = all of the last 50.',
  ),
  v(
    'Conversation',
    'DEFAULT_PHONE_REGION',
    undefined,
    'Region (ISO 3166 code like US, GB) whose national format phone numbers are read in, e.g. (415) 555-0100; ' +
      'unset = numbers must be international (+…) or digits with the country code.',
  ),
  v('Conversation', 'AUTO_ENROLL_NEW_USERS', 'false', 'Enrol an unknown sender on their first message (true/false).'),
  v(
    'Conversation',
    'PROMPTPIPE_DEBUG',
    'false',
    'Global debug mode: participants get extra debug messages (true/false).',
  ),

  v(
    'Habit coach',
    'INTAKE_BOT_PROMPT_FILE',
    undefined,
    'File overriding the intake system prompt (unset = the shipped prompt).',
  ),
  v(
    'Habit coach',
    'FEEDBACK_TRACKER_PROMPT_FILE',
    undefined,
    'File overriding the feedback system prompt (unset = the shipped prompt).',
  ),
  v(
    'Habit coach',
    'PROMPT_GENERATOR_PROMPT_FILE',
    undefined,
    'File overriding the habit-prompt generator system prompt (unset = the shipped prompt).',
  ),
  v(
    'Habit coach',
    'SCHEDULER_PREP_TIME_MINUTES',
    '10',
    'Daily prompts go out this many minutes before the target time (0-1440).',
  ),
  v(
    'Habit coach',
    'DAILY_PROMPT_REMINDER_DELAY',
    '5h',
    'Reminder after a daily prompt with no reply (duration like 5h, 90m; 0 = off).',
  ),
  v(
    'Habit coach',
    'AUTO_FEEDBACK_AFTER_PROMPT_ENABLED',
    'true',
    'Switch to feedback after a daily prompt with no reply (true/false).',
  ),
  v(
    'Habit coach',
    'AUTO_FEEDBACK_DELAY',
    '5m',
    'How long after a daily prompt the auto-feedback switch happens (duration; 0 = off).',
  ),
  v('Habit coach', 'FEEDBACK_INITIAL_TIMEOUT', '15m', 'First feedback nudge after a daily prompt (duration; 0 = off).'),
  v('Habit coach', 'FEEDBACK_FOLLOWUP_DELAY', '3h', 'Follow-up nudge after the first one (duration; 0 = off).'),

  v(
    'Study',
    'STUDY_TIMEZONE',
    'UTC',
    "IANA time zone (any case, e.g. America/Toronto) whose calendar days the study overview's per-day series " +
      'counts in: prompts sent, replies, done, active participants per day.',
  ),

  v(
    'Go platform routes',
    'PLATFORM_DEFAULT_SCHEDULE',
    undefined,
    "Schedule of a POST /schedule request that has none (the Go PromptPipe's DEFAULT_SCHEDULE): minute hour day " +
      'month weekday, e.g. "0 9 * * 1" (09:00 on Mondays); minute and hour are numbers, the others a number or * ' +
      "(any); read in the participant's zone, else UTC. Unset = such a request is a 400.",
  ),
  v(
    'Go platform routes',
    'PLATFORM_CUSTOM_GENERATOR',
    undefined,
    'JavaScript or TypeScript module that writes type "custom" prompts of POST /send and /schedule (what the ' +
      'Go PromptPipe registered in code): it exports generate(prompt, context), returning the text, and may ' +
      'export check(prompt), returning {field, message} to refuse a request. Unset = custom prompts are a 400.',
  ),

  v(
    'Assistant',
    'ASSISTANT_PROFILES_DIR',
    undefined,
    'Directory of persona profile files (*.json: name, description, systemPrompt, tools).',
    { defaultNote: 'the shipped developer, business and life profiles' },
  ),
  v('Assistant', 'ASSISTANT_DEFAULT_PROFILE', 'life', 'Profile used when routing names none, fails or times out.'),
  v(
    'Assistant',
    'ASSISTANT_LOCATION',
    'Unknown',
    'Location shown to the model in every context block, e.g. "Berlin, Germany (Europe/Berlin)".',
  ),
  v(
    'Assistant',
    'ASSISTANT_RECENT_WINDOW',
    '5m',
    'Short-term memory: messages this recent go in as prior dialogue (duration; 0 = none).',
  ),
  v('Assistant', 'ASSISTANT_RECENT_MAX_MESSAGES', '20', 'At most this many recent messages (0-50).'),
  v('Assistant', 'ASSISTANT_MAX_MODEL_CALLS', '8', 'Model calls per reply in the agentic loop (1-50).'),
  v('Assistant', 'ASSISTANT_RECALL_MAX_RESULTS', '10', 'Recalled transcript messages at most (1-100).'),
  v(
    'Assistant',
    'ASSISTANT_RECALL_MIN_SIMILARITY',
    '0.3',
    'Semantic recall (LLM_EMBEDDING_MODEL) leaves out messages less similar than this to the request (cosine, -1 to ' +
      "1); tune it to the embeddings model's scale.",
  ),
  v(
    'Assistant',
    'ASSISTANT_HELPER_TIMEOUT_MS',
    '5000',
    'Timeout of the profile-routing, recall-extraction and embedding calls, in ms (they fall back, never fail the ' +
      'turn).',
  ),
  v(
    'Assistant',
    'MCP_CONFIG_FILE',
    undefined,
    'JSON file of MCP servers whose tools the assistant may call: {"mcpServers": {"name": {"command", "args", ' +
      '"env"} | {"url", "headers"}}}, each with an optional "requireApproval" ("writes", "always", "never" or ' +
      'tool names).',
  ),

  v(
    'Service desk',
    'DESK_LOCALE',
    'en-US',
    'Locale (a BCP 47 tag such as en-US, de-DE, en-GB) the service desk tells callers amounts, dates and times ' +
      'in: "Thursday, June 4, 9:00–11:00 AM" in en-US, "Donnerstag, 4. Juni, 09:00–11:00" in de-DE; amounts in ' +
      "the invoice's currency, written the locale's way.",
  ),
  v(
    'Service desk',
    'DESK_TIME_ZONE',
    'America/Los_Angeles',
    "IANA time zone (any case, e.g. Europe/Berlin) of the service desk's business: the day it counts as today, " +
      'and the zone appointment dates and windows are local to and are told in.',
  ),

  v(
    'Clock',
    'CLOCK',
    'system',
    'system, or virtual: time stands still until POST /admin/clock moves it (demos, tests); a restart resumes ' +
      'from the virtual time kept in the database.',
  ),
  v(
    'Clock',
    'CLOCK_START',
    undefined,
    'Start of the virtual clock, an ISO 8601 date-time with offset (only with CLOCK=virtual); on a restart it ' +
      'applies only if later than the kept virtual time.',
    { defaultNote: 'the current time' },
  ),

  v(
    'Delivery',
    'OUTBOUND_WEBHOOK_URL',
    undefined,
    'http(s) URL each reply is POSTed to; unset = replies are only logged and kept in the history.',
  ),
  v(
    'Delivery',
    'OUTBOUND_WEBHOOK_SECRET',
    undefined,
    'Signs every outbound webhook (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature): ' +
      'whsec_<base64> is base64-decoded into the HMAC key, any other value (16+ characters) is the key as is; ' +
      'unset = unsigned (logged at start).',
    { secret: true },
  ),
  v('Delivery', 'OUTBOUND_MAX_ATTEMPTS', '8', 'Delivery attempts per message before it is marked failed (1-100).'),
  v(
    'Delivery',
    'OUTBOUND_CONCURRENCY',
    '16',
    "Deliveries in flight at once, across conversations (1-1000); a conversation's messages still go out one at a " +
      'time, in order.',
  ),

  v(
    'WhatsApp',
    'WHATSAPP_ACCESS_TOKEN',
    undefined,
    'Cloud API access token (a system-user token). Setting any WHATSAPP_* variable but the two optional ones ' +
      'enables the channel and requires the other three.',
    { secret: true },
  ),
  v('WhatsApp', 'WHATSAPP_PHONE_NUMBER_ID', undefined, 'The business phone number id messages are sent from (digits).'),
  v(
    'WhatsApp',
    'WHATSAPP_APP_SECRET',
    undefined,
    'App secret that signs webhooks (X-Hub-Signature-256); unsigned or wrongly signed webhooks get 401.',
    { secret: true },
  ),
  v(
    'WhatsApp',
    'WHATSAPP_VERIFY_TOKEN',
    undefined,
    'Token Meta echoes in the GET /webhooks/whatsapp verification handshake.',
    { secret: true },
  ),
  v(
    'WhatsApp',
    'WHATSAPP_API_BASE_URL',
    'https://graph.facebook.com/v23.0',
    'Graph API base URL including the version (tests point it at a local fake).',
  ),
  v(
    'WhatsApp',
    'WHATSAPP_TEMPLATE_NAME',
    undefined,
    'Approved template (one body variable, {{1}}) used outside the 24-hour window; unset = such sends fail ' +
      'with a clear error.',
  ),
  v('WhatsApp', 'WHATSAPP_TEMPLATE_LANGUAGE', 'en_US', 'Language code of WHATSAPP_TEMPLATE_NAME.'),
  v(
    'WhatsApp',
    'WHATSAPP_TEMPLATE_TEXT_LENGTH',
    '100',
    "Characters of the template's own body text around {{1}}. Meta caps the whole body at 1,024, so with a template " +
      'set, messages are split into parts of 1,024 minus this (else 4,096).',
  ),

  v(
    'Twilio SMS',
    'TWILIO_ACCOUNT_SID',
    undefined,
    'Account SID (AC…). Setting any TWILIO_* variable but the base URL enables SMS and requires the other two.',
  ),
  v(
    'Twilio SMS',
    'TWILIO_AUTH_TOKEN',
    undefined,
    'Auth token: signs webhooks (X-Twilio-Signature) and authenticates REST calls.',
    { secret: true },
  ),
  v('Twilio SMS', 'TWILIO_FROM', undefined, 'Sender: an E.164 number, or a Messaging Service SID (MG…).'),
  v(
    'Twilio SMS',
    'TWILIO_API_BASE_URL',
    'https://api.twilio.com',
    'REST API base URL (tests point it at a local fake).',
  ),
  v(
    'Twilio SMS',
    'PUBLIC_BASE_URL',
    undefined,
    'The URL Twilio calls us at (e.g. https://pp.example.org behind a proxy): used to check signatures and for ' +
      'status callbacks.',
    { defaultNote: "the request's own scheme and Host" },
  ),

  v('Logging', 'LOG_LEVEL', 'info', 'fatal, error, warn, info, debug, trace or silent.'),
  v('Logging', 'LOG_REDACT', 'true', 'Redact phone numbers and message text in logs (secrets are always redacted).'),

  v(
    'Tracing',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    undefined,
    'Turns on OpenTelemetry traces: the base URL of an OTLP/HTTP receiver (an OpenTelemetry Collector, Jaeger, ' +
      'Tempo), e.g. http://127.0.0.1:4318; spans are POSTed as JSON to <url>/v1/traces. Unset = no tracing.',
  ),
  v(
    'Tracing',
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    undefined,
    'The full URL spans are POSTed to, used as is (e.g. http://127.0.0.1:4318/v1/traces); turns tracing on too ' +
      'and wins over OTEL_EXPORTER_OTLP_ENDPOINT.',
  ),
  v(
    'Tracing',
    'OTEL_EXPORTER_OTLP_HEADERS',
    undefined,
    'Headers sent with every export, as key=value pairs separated by commas (values percent-encoded), e.g. ' +
      'authorization=Bearer%20abc. Only with tracing on.',
    { secret: true },
  ),
  v(
    'Tracing',
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    'http/json',
    'Only http/json (OTLP over HTTP, JSON bodies) is supported; grpc and http/protobuf are refused.',
  ),
  v('Tracing', 'OTEL_SERVICE_NAME', 'promptpipe', 'service.name of every span (the resource attribute).'),
]);

export const CONFIG_VARIABLE_NAMES: ReadonlySet<string> = new Set(CONFIG_VARIABLES.map((variable) => variable.name));

/** The default as a person reads it: the raw default, the note, or "unset". */
export function describeDefault(variable: ConfigVariable): string {
  return variable.defaultNote ?? variable.default ?? 'unset';
}

/** A Markdown table of every variable, for the README. */
export function configTableMarkdown(): string {
  const rows = CONFIG_VARIABLES.map((variable) => {
    const shown = variable.defaultNote ?? (variable.default === undefined ? '—' : `\`${variable.default}\``);
    return `| \`${variable.name}\` | ${shown} | ${variable.description.replaceAll('|', '\\|')} |`;
  });
  return ['| Variable | Default | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The `.env.example` text: every variable commented out at its default, under a one-line comment. */
export function envExample(): string {
  const lines = [
    '# PromptPipe configuration. Copy to .env and uncomment what you change;',
    '# real environment variables take precedence over .env. Empty values count as unset.',
  ];
  let section = '';
  for (const variable of CONFIG_VARIABLES) {
    if (variable.section !== section) {
      section = variable.section;
      lines.push('', `# --- ${section} ---`);
    }
    const note = variable.defaultNote ? ` Default: ${variable.defaultNote}.` : '';
    lines.push(`# ${variable.description}${note}`, `# ${variable.name}=${variable.default ?? ''}`);
  }
  return `${lines.join('\n')}\n`;
}
