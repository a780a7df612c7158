import type { FastifyInstance } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../core/errors.ts';
import { sessionEventSchema } from '../events/session-event.ts';
import { httpStatusOf } from './http-errors.ts';
import { jsonSchema } from './participant-schemas.ts';
import { socketFrame } from './session-stream.ts';

/**
 * The parts of `/openapi.json` the route schemas do not carry (issue #20): each operation's
 * responses (its success, and every error status it can answer with the `Error` envelope), its
 * security requirement, the WebSocket's frames, the event stream, and the outbound webhook
 * (`webhooks`). Kept here, keyed by `METHOD path`, so the route files stay about behaviour; a test
 * checks that every registered route has an entry.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const string = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const dateTime: Schema = { type: 'string', format: 'date-time' };
const integer: Schema = { type: 'integer' };
const object = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({
  type: 'object',
  properties,
  required,
});
const array = (items: Schema): Schema => ({ type: 'array', items });

/** `{"status":"ok","message"?,"result"?}` with `result` as given. */
const envelope = (result?: Schema, extra: Record<string, Schema> = {}): Schema => ({
  type: 'object',
  properties: {
    status: { const: 'ok' },
    message: string(),
    ...(result ? { result } : {}),
    ...extra,
  },
  required: ['status', ...(result ? ['result'] : [])],
});

/** A page of a list: the envelope with `total` and `next` (also a `Link: rel="next"` header). */
const page = (item: Schema): Schema =>
  envelope(array(item), {
    total: integer,
    limit: integer,
    offset: integer,
    next: nullable(string('The path of the next page; null on the last')),
  });

/** A tool call that waits, or waited, for a person's yes (decision 022). */
const approvalCall = object(
  {
    callId: string('The id to answer it by'),
    tool: string(),
    summary: string('What would happen, in words'),
    arguments: { description: 'The arguments as the model wrote them (JSON, or the raw text)' },
    status: { type: 'string', enum: ['pending', 'approved', 'denied', 'dropped'] },
    decidedAt: nullable(dateTime),
    decidedBy: nullable({ type: 'string', enum: ['person', 'operator'] }),
  },
  ['callId', 'tool', 'summary', 'status'],
);

export const COMPONENT_SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: 'Every error: a stable `code`, a message, and the request field at fault when there is one.',
    properties: {
      status: { const: 'error' },
      code: { type: 'string', enum: [...ERROR_CODES] },
      message: string(),
      field: string('The request field at fault (`phone_number`, `caller.phone`, `url`, `content-type`, ...)'),
    },
    required: ['status', 'code', 'message'],
  },
  Ok: envelope(undefined),
  Participant: object({
    id: string(),
    phone_number: string('E.164'),
    name: nullable(string()),
    gender: nullable(string()),
    ethnicity: nullable(string()),
    background: nullable(string()),
    timezone: string('IANA zone'),
    status: { type: 'string', enum: ['active', 'paused', 'withdrawn'] },
    cohort: nullable(string()),
    debug: { type: 'boolean' },
    enrolled_at: dateTime,
    created_at: dateTime,
    updated_at: dateTime,
  }),
  Message: object(
    {
      id: string(),
      seq: integer,
      role: { type: 'string', enum: ['user', 'assistant', 'system'] },
      kind: { type: 'string', enum: ['text', 'poll'] },
      text: string(),
      poll: object({ question: string(), options: array(string()) }),
      source: string(),
      turn_id: nullable(string()),
      created_at: dateTime,
    },
    ['id', 'seq', 'role', 'kind', 'text', 'source', 'turn_id', 'created_at'],
  ),
  Turn: object({
    id: string(),
    trigger: string('message, greeting, timer, ...'),
    module: string(),
    status: { type: 'string', enum: ['completed', 'failed', 'cancelled'] },
    model_calls: integer,
    tool_rounds: integer,
    model_ms: integer,
    tool_ms: integer,
    total_ms: integer,
    first_token_ms: nullable(integer),
    time_to_status_ms: nullable(integer),
    error: nullable(string()),
    started_at: dateTime,
    finished_at: dateTime,
    trace_id: nullable(string('The OpenTelemetry trace the turn ran in (tracing on)')),
    attempts: {
      type: 'integer',
      minimum: 1,
      description: 'How many times the turn ran, this one included (more than 1: retried after a failure or an outage)',
    },
    tool_calls: array(
      object({
        name: string(),
        round: integer,
        arguments: string('As the model produced them'),
        result: string(),
        status: { type: 'string', enum: ['ok', 'error'] },
        duration_ms: integer,
      }),
    ),
  }),
  Delivery: object({
    id: string(),
    message_id: string(),
    channel: string(),
    kind: string(),
    text: string(),
    status: { type: 'string', enum: ['pending', 'sent', 'failed'] },
    attempts: integer,
    last_error: nullable(string()),
    sent_at: nullable(dateTime),
    provider_message_id: nullable(string()),
    delivery_status: nullable(string()),
    delivery_status_at: nullable(dateTime),
    delivery_error: nullable(string()),
    created_at: dateTime,
  }),
  Timer: object({ id: string(), kind: string(), due_at: dateTime, key: nullable(string()), attempts: integer }),
  WebSession: object({
    id: string(),
    flow: string(),
    state: string(),
    created_at: dateTime,
    last_activity_at: dateTime,
  }),
  DependencyStatus: object({
    state: { type: 'string', enum: ['ok', 'failing', 'unknown'] },
    lastSuccessAt: nullable(dateTime),
    lastErrorAt: nullable(dateTime),
    lastError: nullable(string()),
    consecutiveFailures: integer,
  }),
  Health: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ok', 'degraded', 'down'] },
      problems: array(string('Why the status is not ok, one line each')),
      store: { type: 'string', enum: ['sqlite', 'postgres'] },
      store_ok: { type: 'boolean' },
      store_problem: string(),
      model: object({ provider: string(), model: string() }),
      model_status: ref('DependencyStatus'),
      channels: { type: 'object', additionalProperties: ref('DependencyStatus') },
      timer_worker: object({
        running: { type: 'boolean' },
        last_pass_at: nullable(dateTime),
        last_pass_age_s: nullable(integer),
      }),
      backlog: integer,
      queues: nullable({ type: 'object', additionalProperties: nullable(integer) }),
    },
    required: ['status', 'store', 'store_ok', 'model', 'backlog'],
  },
  SessionEvent: {
    ...jsonSchema(sessionEventSchema),
    description:
      "One event of a conversation's session stream (spec 004): the WebSocket's frames and the SSE stream's `data:`. " +
      '`seq` is gapless per conversation; `pong` and `ack` are for the socket that asked (seq 0).',
  },
  SocketFrame: {
    ...jsonSchema(socketFrame),
    description:
      'What a client sends on the WebSocket: a resync, a ping (answered with a `pong` event), ' +
      'or an input (answered with an `ack` event carrying its `ref`, or an `error`). ' +
      'Input needs the API token or a client token with `write`.',
  },
  OutboundWebhook: object(
    {
      id: string('The message id'),
      participant_id: nullable(string()),
      to: string('The recipient, E.164'),
      kind: { type: 'string', enum: ['text', 'poll'] },
      text: string(),
      poll: object({ question: string(), options: array(string()) }),
      created_at: dateTime,
    },
    ['id', 'participant_id', 'to', 'kind', 'text', 'created_at'],
  ),
  GoTimer: {
    type: 'object',
    description: "A timer as the Go server's /timers returned it",
    additionalProperties: true,
  },
};

type Body = { schema: Schema; type?: string };
interface Operation {
  status: number;
  description: string;
  body?: Body;
  /** Error statuses beyond the ones every operation of its kind has (see `errorsOf`). */
  errors?: number[];
  /** Public: no token (health, the console's files, the document itself). */
  public?: boolean;
  /** Authenticated by the provider's signature instead of the bearer token. */
  signature?: 'whatsapp_signature' | 'twilio_signature';
}

const json = (schema: Schema): Body => ({ schema });
const text = (type: string, description: string): Body => ({ type, schema: string(description) });
const eventStream = (description: string): Body => ({ type: 'text/event-stream', schema: string(description) });
const consoleFile = (type: string): Operation => ({
  status: 200,
  description: 'A file of the console',
  body: text(type, 'The file'),
  public: true,
});

const participant = ref('Participant');

/** Every operation, by `METHOD path` as in the document. */
export const OPERATIONS: Record<string, Operation> = {
  'GET /health': {
    status: 200,
    description: 'ok or degraded; 503 (down) when the store cannot serve, with the same body',
    body: json(ref('Health')),
    public: true,
  },
  'GET /openapi.json': {
    status: 200,
    description: 'This document',
    body: json({ type: 'object' }),
    public: true,
  },
  'GET /metrics': {
    status: 200,
    description: 'Prometheus text format (public with METRICS_PUBLIC=true)',
    body: text('text/plain; version=0.0.4', 'Prometheus exposition format'),
  },
  'GET /': consoleFile('text/html'),
  'GET /docs': consoleFile('text/html'),
  'GET /console/app.js': consoleFile('text/javascript'),
  'GET /console/docs.js': consoleFile('text/javascript'),
  'GET /console/api.js': consoleFile('text/javascript'),
  'GET /console/render.js': consoleFile('text/javascript'),
  'GET /console/study.js': consoleFile('text/javascript'),
  'GET /console/study-charts.js': consoleFile('text/javascript'),
  'GET /console/study-files.js': consoleFile('text/javascript'),
  'GET /console/styles.css': consoleFile('text/css'),
  'GET /console/uplot.js': consoleFile('text/javascript'),
  'GET /console/uplot.css': consoleFile('text/css'),
  'GET /console/changes': {
    status: 200,
    description: 'Server-sent events: `data:` is the id of a conversation that changed',
    body: eventStream('One event per changed conversation'),
  },

  'GET /study/export': {
    status: 200,
    description: 'The study as a ZIP of CSV files (streamed)',
    body: { type: 'application/zip', schema: { type: 'string', contentMediaType: 'application/zip' } },
  },
  'GET /study/overview': {
    status: 200,
    description: 'Totals, per-participant rows and the per-day series',
    body: json(envelope({ type: 'object' })),
  },
  'GET /study/participants/{id}/adherence': {
    status: 200,
    description: "One participant's adherence calendar",
    body: json(envelope({ type: 'object' })),
  },

  'GET /conversation/participants': {
    status: 200,
    description: 'A page of participants',
    body: json(page(participant)),
  },
  'POST /conversation/participants': {
    status: 201,
    description: 'Enrolled; the greeting turn runs next',
    body: json(envelope(participant)),
    errors: [409],
  },
  'POST /conversation/participants/import': {
    status: 201,
    description: 'Enrolled, ids in row order (with dry_run=true: 200 and the report)',
    body: json(envelope({ type: 'object' })),
    errors: [409],
  },
  'GET /conversation/participants/{id}': {
    status: 200,
    description: 'The participant',
    body: json(envelope(participant)),
  },
  'PUT /conversation/participants/{id}': {
    status: 200,
    description: 'Updated',
    body: json(envelope(participant)),
    errors: [409],
  },
  'DELETE /conversation/participants/{id}': {
    status: 200,
    description: 'Unenrolled: their personal data removed, a goodbye sent',
    body: json(envelope()),
  },
  'GET /conversation/participants/{id}/history': {
    status: 200,
    description: 'Messages, oldest first',
    body: json(envelope(array(ref('Message')))),
  },
  'GET /conversation/participants/{id}/turns': {
    status: 200,
    description: 'Recent turns with their tool calls',
    body: json(envelope(array(ref('Turn')))),
  },
  'GET /conversation/participants/{id}/timers': {
    status: 200,
    description: 'Pending timers',
    body: json(envelope(array(ref('Timer')))),
  },
  'GET /conversation/participants/{id}/deliveries': {
    status: 200,
    description: 'Every outbound message as the channel saw it',
    body: json(envelope(array(ref('Delivery')))),
  },
  'GET /conversation/participants/{id}/state': {
    status: 200,
    description: 'State, sub-state, profile, schedules, timers',
    body: json(envelope({ type: 'object' })),
  },
  'POST /conversation/participants/{id}/state': {
    status: 200,
    description: 'The sub-state was forced',
    body: json(envelope({ type: 'object' })),
    errors: [409],
  },
  'POST /conversation/inbound': {
    status: 202,
    description: 'Recorded; the turn runs after this answer (duplicate: the same message_id was seen)',
    body: json(
      envelope(
        object(
          {
            inbox_id: string(),
            participant_id: string(),
            duplicate: { type: 'boolean' },
            status: { type: 'string', enum: ['queued', 'recorded', 'unknown_sender'] },
          },
          ['inbox_id', 'duplicate', 'status'],
        ),
      ),
    ),
    errors: [409],
  },
  'GET /admin/clock': {
    status: 200,
    description: 'The clock',
    body: json(envelope(object({ mode: string(), now: dateTime }, ['now']))),
  },
  'POST /admin/clock': {
    status: 200,
    description: 'Moved; timers that came due fired',
    body: json(envelope(object({ now: dateTime, fired: integer }))),
    errors: [409],
  },

  'GET /api/conversations': {
    status: 200,
    description: 'Web sessions, newest first',
    body: json(page(ref('WebSession'))),
  },
  'POST /api/conversations': {
    status: 201,
    description: 'Started',
    body: json(envelope(object({ id: string(), flow: string(), state: string(), channel: string() }))),
  },
  'GET /api/conversations/{id}/socket': {
    status: 101,
    description:
      "Switching protocols: a WebSocket of the conversation's events. " +
      'Server → client: `SessionEvent` frames; client → server: `SocketFrame` frames. ' +
      'Closed with 4008 when more than 1 MiB behind, 1008 for a client flooding it.',
  },
  'GET /api/conversations/{id}/stream': {
    status: 200,
    description:
      'Server-sent events: `id:` is the seq, `data:` a `SessionEvent` (schema in components); Last-Event-ID resumes',
    body: eventStream('`id: <seq>` and `data: <SessionEvent JSON>` per event'),
  },
  'POST /api/conversations/{id}/message': {
    status: 202,
    description:
      'Accepted (barge_in and partial_transcript: 200). Deliberately not the envelope: ' +
      '`{ok, callSessionId, ...}` is what voice clients of the session API expect (spec 004).',
    body: json(
      object(
        {
          ok: { const: true },
          callSessionId: string(),
          inboxId: string(),
          duplicate: { type: 'boolean' },
          interrupted: { type: 'boolean' },
        },
        ['ok', 'callSessionId'],
      ),
    ),
    errors: [409],
  },
  'POST /api/conversations/{id}/resync': {
    status: 200,
    description: 'The events after lastEventId, then a resync snapshot',
    body: json(envelope(array(ref('SessionEvent')))),
  },
  'GET /api/conversations/{id}/approvals': {
    status: 200,
    description: 'The tool calls waiting for a yes (`waiting`) and the last ones decided, newest first (`decided`)',
    body: json(envelope(object({ waiting: array(approvalCall), decided: array(approvalCall) }))),
  },
  'POST /api/conversations/{id}/approvals/{callId}': {
    status: 202,
    description:
      'Decided; when no call of the reply waits any more, the reply resumes as a turn of its own. ' +
      'The same decision again answers 200 with the call as it stands; the other decision is a 409 `approval_decided`.',
    body: json(envelope(approvalCall)),
    errors: [409],
  },
  'GET /api/conversations/{id}/turns': {
    status: 200,
    description: 'Recent turns with their tool calls, newest first',
    body: json(envelope(array(ref('Turn')))),
  },
  'GET /api/conversations/{id}/summary': {
    status: 200,
    description: 'Markdown: turns, model and tool calls, state changes',
    body: text('text/markdown', 'The summary'),
  },
  'POST /api/conversations/{id}/chat': {
    status: 200,
    description: 'The Vercel AI SDK UI message stream (x-vercel-ai-ui-message-stream: v1)',
    body: eventStream('UI message stream chunks'),
    errors: [409],
  },
  'POST /api/tickets': {
    status: 200,
    description: 'A single-use, 60-second ticket for ?ticket=',
    body: json(envelope(object({ ticket: string(), expires_at: dateTime }))),
  },
  'POST /api/tokens': {
    status: 200,
    description: 'A client token for one conversation',
    body: json(
      envelope(
        object({
          token: string(),
          conversation_id: string(),
          scopes: array({ type: 'string', enum: ['read', 'write'] }),
          expires_at: dateTime,
        }),
      ),
    ),
  },

  'POST /send': {
    status: 200,
    description: 'Queued: {"status":"ok","message":"Message sent successfully"}',
    body: json(envelope()),
    errors: [409],
  },
  'POST /schedule': {
    status: 201,
    description: "Scheduled; `result` is the schedule's id",
    body: json(envelope(string())),
    errors: [409],
  },
  'GET /receipts': {
    status: 200,
    description: 'Every send and what the channel reported',
    body: json(envelope(array(object({ to: string(), status: string(), time: integer })))),
  },
  'POST /response': { status: 201, description: 'Recorded', body: json(envelope()) },
  'GET /responses': {
    status: 200,
    description: 'Every reply',
    body: json(envelope(array(object({ from: string(), body: string(), time: integer })))),
  },
  'GET /stats': {
    status: 200,
    description: 'Response statistics',
    body: json(
      envelope(
        object({
          total_responses: integer,
          responses_per_sender: { type: 'object', additionalProperties: integer },
          avg_response_length: { type: 'number' },
        }),
      ),
    ),
  },
  'GET /timers': {
    status: 200,
    description: "Every timer still to fire (Go's shape, no envelope)",
    body: json(object({ timers: array(ref('GoTimer')), count: integer })),
  },
  'GET /timers/{id}': { status: 200, description: "One timer (Go's shape)", body: json(ref('GoTimer')) },
  'DELETE /timers/{id}': {
    status: 200,
    description: 'Cancelled',
    body: json(object({ message: string(), timerID: string(), canceled: { const: true } })),
    errors: [409],
  },

  'GET /webhooks/whatsapp': {
    status: 200,
    description: "Meta's verification handshake: the hub.challenge, echoed",
    body: text('text/plain', 'hub.challenge'),
    public: true,
  },
  'POST /webhooks/whatsapp': {
    status: 200,
    description: 'Messages and statuses accepted (X-Hub-Signature-256 checked with WHATSAPP_APP_SECRET)',
    body: json(envelope(undefined, { messages: integer, statuses: integer })),
    signature: 'whatsapp_signature',
  },
  'POST /webhooks/twilio': {
    status: 204,
    description: 'Message accepted (X-Twilio-Signature checked with TWILIO_AUTH_TOKEN)',
    signature: 'twilio_signature',
  },
  'POST /webhooks/twilio/status': {
    status: 204,
    description: 'Status callback accepted',
    signature: 'twilio_signature',
  },
};

/** The error codes each status carries, for the responses' descriptions. */
const CODES_BY_STATUS = new Map<number, ErrorCode[]>();
for (const code of ERROR_CODES) {
  const status = httpStatusOf(code);
  CODES_BY_STATUS.set(status, [...(CODES_BY_STATUS.get(status) ?? []), code]);
}

const ERROR_MEANING: Record<number, string> = {
  400: 'The request is invalid: `field` names what',
  401: 'No, a wrong or an expired token (or signature)',
  403: 'A client token outside its conversation or scopes',
  404: 'No such resource (or route)',
  409: 'Conflicts with the current state',
  413: 'The body is larger than MAX_BODY_BYTES',
  415: 'The body is not of the accepted media type',
  429: 'Too many failed authentications from this address',
  500: 'A bug: the log has the stack',
  502: 'The model or a channel refused the request',
  503: 'The store cannot serve, or the server is shutting down (retry)',
};

/**
 * The error statuses an operation can answer: 400 for anything it reads; 401, 403 and 429 when it
 * needs a token; 404 with a path parameter; 413 and 415 with a body; 500 and 503 always; and the
 * ones its entry adds.
 */
function errorsOf(method: string, path: string, operation: Operation, secured: boolean): number[] {
  const statuses = new Set<number>([400, 500, 503, ...(operation.errors ?? [])]);
  if (secured) for (const status of [401, 403, 429]) statuses.add(status);
  if (operation.signature) statuses.add(401);
  if (path.includes('{')) statuses.add(404);
  if (method === 'POST' || method === 'PUT') for (const status of [413, 415]) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

function responsesOf(method: string, path: string, operation: Operation, secured: boolean): Schema {
  const success: Schema = { description: operation.description };
  if (operation.body)
    success.content = { [operation.body.type ?? 'application/json']: { schema: operation.body.schema } };
  const responses: Schema = { [String(operation.status)]: success };
  // `/health` answers its body with 503 too (down).
  if (path === '/health') {
    responses['503'] = {
      description: 'down: the store cannot serve',
      content: { 'application/json': { schema: ref('Health') } },
    };
    return responses;
  }
  for (const status of errorsOf(method, path, operation, secured)) {
    const codes = CODES_BY_STATUS.get(status) ?? [];
    responses[String(status)] = {
      description: `${ERROR_MEANING[status] ?? 'Error'}. Codes: ${codes.join(', ')}`,
      content: { 'application/json': { schema: ref('Error') } },
    };
  }
  return responses;
}

export interface DescriptionOptions {
  apiToken: boolean;
  metricsPublic: boolean;
}

/** Completes the generated document (the `transformObject` of @fastify/swagger). */
export function completeDescription<T extends object>(given: T, options: DescriptionOptions): T {
  const document = given as Schema;
  const paths = (document.paths ?? {}) as Record<string, Record<string, Schema>>;
  // @fastify/swagger leaves WebSocket routes out; the socket is described as the GET it starts with.
  paths['/api/conversations/{id}/socket'] = {
    get: {
      tags: ['sessions'],
      summary: "WebSocket: the conversation's events (?lastEventId= to resume; ?ticket= for browsers)",
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'lastEventId', in: 'query', schema: { type: 'integer', minimum: 0 } },
        { name: 'ticket', in: 'query', schema: { type: 'string' } },
      ],
      'x-websocket': {
        serverFrames: ref('SessionEvent'),
        clientFrames: ref('SocketFrame'),
      },
      'x-client-scopes': ['read', 'write (input frames)'],
    },
  };
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      const operation = OPERATIONS[`${method.toUpperCase()} ${path}`];
      if (!operation) continue;
      const isPublic = operation.public === true || (path === '/metrics' && options.metricsPublic) || !options.apiToken;
      const secured = !isPublic && !operation.signature;
      op.responses = responsesOf(method.toUpperCase(), path, operation, secured);
      if (operation.signature) op.security = [{ [operation.signature]: [] }];
      else if (isPublic) op.security = [];
      else op.security ??= [{ bearer: [] }];
    }
  }
  const components = (document.components ?? {}) as Record<string, Schema>;
  document.components = {
    ...components,
    schemas: { ...(components.schemas ?? {}), ...COMPONENT_SCHEMAS },
    securitySchemes: {
      ...(components.securitySchemes ?? {}),
      whatsapp_signature: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Hub-Signature-256',
        description: 'sha256=<HMAC of the raw body with WHATSAPP_APP_SECRET>',
      },
      twilio_signature: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Twilio-Signature',
        description: "Twilio's signature of the URL and form parameters with TWILIO_AUTH_TOKEN",
      },
    },
  };
  document.webhooks = {
    'outbound-message': {
      post: {
        summary: 'Each reply, POSTed to OUTBOUND_WEBHOOK_URL',
        description:
          'Sent with an `Idempotency-Key` header that is the same on every retry, ' +
          'and with OUTBOUND_WEBHOOK_SECRET the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, ' +
          '`webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`). 2xx is delivered; ' +
          '408, 429, 5xx and network errors are retried with backoff (1 s doubling to 5 min, OUTBOUND_MAX_ATTEMPTS); ' +
          'other 4xx are final.',
        parameters: [
          { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'webhook-id', in: 'header', schema: { type: 'string' } },
          { name: 'webhook-timestamp', in: 'header', schema: { type: 'string' } },
          { name: 'webhook-signature', in: 'header', schema: { type: 'string' } },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: ref('OutboundWebhook') } } },
        responses: {
          '200': { description: 'Delivered (any 2xx)' },
          '429': { description: 'Retried later' },
          '503': { description: 'Retried later (any 5xx, 408 too)' },
          '400': { description: 'Final: the message is marked failed (any other 4xx)' },
        },
      },
    },
  };
  return given;
}

export interface RegisteredRoute {
  method: string;
  /** In the document's form: `/a/{id}`. */
  path: string;
  /** A path's 405 answer to its other methods, which is no operation of its own. */
  methodNotAllowed: boolean;
}

const REGISTERED = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route the app registers from now on (HEAD, which Fastify adds to each GET, aside). */
export function recordRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  REGISTERED.set(app, routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    for (const method of methods)
      if (method !== 'HEAD') routes.push({ method, path, methodNotAllowed: route.config?.methodNotAllowed === true });
  });
}

/** What `recordRoutes` saw: the test checks each is described. */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return REGISTERED.get(app) ?? [];
}
