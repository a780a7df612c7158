import swagger from '@fastify/swagger';
import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { WebSocket } from '@fastify/websocket';
import { AppError } from '../core/errors.ts';
import { unstorablePath } from '../core/nul.ts';
import type { ChangeFeed } from '../engine/change-feed.ts';
import type { Engine } from '../engine/engine.ts';
import type { EventHub } from '../events/event-hub.ts';
import type { InboundService } from '../engine/inbound-service.ts';
import type { ParticipantService } from '../engine/participant-service.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../core/clock.ts';
import type { ClockControlDeps } from '../timers/clock-control.ts';
import { registerAuth } from './auth.ts';
import { FailureLimiter } from './failure-limiter.ts';
import { TokenSigner } from './signed-token.ts';
import { tokenRoutes } from './token-routes.ts';
import { clientErrorHandler, errorBody, forbiddenKey, handleError } from './http-errors.ts';
import { checkStore, HEALTH_TIMEOUT_MS } from './store-health.ts';
import { overallHealth } from './health.ts';
import type { TimerWorker } from '../timers/timer-worker.ts';
import { adminRoutes } from './admin-routes.ts';
import { consoleRoutes } from './console-routes.ts';
import { inboundRoutes } from './inbound-routes.ts';
import { participantRoutes } from './participant-routes.ts';
import { resource } from './resource.ts';
import { conversationById, sessionRoutes } from './session-routes.ts';
import type { RouteHost } from '../flows/flow-module.ts';
import { uiStreamRoute } from './ui-stream-route.ts';
import { twilioRoutes } from './twilio-routes.ts';
import { whatsappRoutes } from './whatsapp-routes.ts';
import { TicketBook } from './tickets.ts';
import type { PhoneRegion } from '../core/phone.ts';
import { registerCors } from './cors.ts';
import { metricsRoute } from './metrics-route.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ModelHealth } from '../llm/model-health.ts';
import type { GoPlatformDeps } from './go-platform/platform-deps.ts';
import { goPlatformRoutes } from './go-platform/platform-routes.ts';
import type { Tracing } from '../observability/tracing.ts';
import type { ChannelHealth } from '../observability/observed-gate.ts';
import { traceRequests } from '../observability/traced-requests.ts';
import { completeDescription, recordRoutes } from './api-description.ts';

export interface AppDeps {
  store: Store;
  engine: Engine;
  changes: ChangeFeed;
  events: EventHub;
  participants: ParticipantService;
  inbound: InboundService;
  logger: Logger;
  clock: Clock;
  clockControl: ClockControlDeps | undefined;
  apiToken: string | undefined;
  /** Signs tickets and client tokens; undefined = derived from `apiToken`. */
  tokenSecret?: string | undefined;
  /** Failed authentications per client address per window; undefined = unlimited. */
  authFailureLimit?: { limit: number; windowMs: number } | undefined;
  maxBodyBytes: number;
  /** Browser origins allowed to call the API and open the WebSocket (`CORS_ORIGINS`). */
  corsOrigins?: readonly string[];
  /** National-format phone numbers are read in this region (`DEFAULT_PHONE_REGION`). */
  phoneRegion?: PhoneRegion | undefined;
  /** Shown on /health: which model answers (`offline-demo` is never passed off as an LLM). */
  model: { provider: string; model: string };
  /** Routes the flow modules bring (decision 019). */
  moduleRoutes?: ReadonlyArray<(app: FastifyInstance, host: RouteHost) => void>;
  /** Served at /metrics. */
  metrics?: Metrics;
  /** `/metrics` without the API token (METRICS_PUBLIC). */
  metricsPublic?: boolean;
  /** Shown on /health: whether model calls succeed. */
  modelHealth?: Pick<ModelHealth, 'status'>;
  /** Shown on /health: each channel's last delivery error. */
  channelHealth?: Pick<ChannelHealth, 'status'>;
  /** Shown on /health: whether the timer worker still moves. */
  timerWorker?: Pick<TimerWorker, 'progress'>;
  version: string;
  /** How long `/health` waits for the store (default `HEALTH_TIMEOUT_MS`). */
  healthTimeoutMs?: number;
  /** Provider webhooks, present when the channel is configured. */
  whatsapp?: { appSecret: string; verifyToken: string; phoneNumberId: string } | undefined;
  twilio?: { authToken: string; publicBaseUrl: string | undefined } | undefined;
  /** OpenTelemetry traces: a span per request (decision 021); absent = off. */
  tracing?: Tracing | undefined;
  /** The Go PromptPipe's platform routes (`/send`, `/schedule`, `/receipts`, ...); absent in tests that need none. */
  goPlatform?: Omit<GoPlatformDeps, 'store' | 'engine' | 'participants' | 'clock' | 'phoneRegion'>;
}

/** The HTTP surface. Validation is ours (zod, at the edge); Fastify's schemas only feed OpenAPI. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: deps.maxBodyBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    // A client that stops sending half-way through a request does not hold a connection for ever.
    requestTimeout: 30_000,
    // What the HTTP parser refuses (headers over 16 KiB, a request that never completes, not HTTP).
    clientErrorHandler,
    // Errors the router raises before any route runs leave in the error envelope too.
    frameworkErrors: (error, request, reply) => {
      const detail =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'a path segment is longer than 100 characters'
          : 'is not a valid URL (bad percent-encoding)';
      handleError(new AppError('invalid_request', `url: ${detail}`, { field: 'url' }), request, reply);
    },
  });
  // First of all hooks: everything a request runs happens inside its span.
  if (deps.tracing) traceRequests(app, deps.tracing);
  recordRoutes(app);
  app.setValidatorCompiler(() => (value) => ({ value }));
  // A request still running when the server starts closing is answered on a connection that then
  // closes: kept alive, it would hold the shutdown until the client let go of it.
  let closing = false;
  app.addHook('preClose', async () => void (closing = true));
  app.addHook('onSend', async (_request, reply) => void (closing && reply.header('connection', 'close')));
  // The API speaks JSON only: any other body is a 415, not a string for the schema to puzzle over.
  app.removeContentTypeParser('text/plain');
  // Many clients send `content-type: application/json` on every request: a DELETE or GET without
  // a body is not an empty JSON document. Any other body is parsed as before (poisoning refused).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text === '' && (request.method === 'DELETE' || request.method === 'GET')) return done(null, undefined);
    json(request, text, (error, parsed) => {
      if (error) return done(parsesPlainly(text) ? forbiddenKey() : error, undefined);
      // JSON holds U+0000 and a lone surrogate only as escapes: without one, nothing to look for.
      const found =
        !UNSTORABLE_ESCAPE.test(text) || request.routeOptions.config?.keepsNul ? undefined : unstorablePath(parsed);
      done(found === undefined ? null : unstorableRefused(found, 'body'), parsed);
    });
  });
  app.setErrorHandler(handleError);
  // PostgreSQL cannot store U+0000: refused here, with the field named, whichever the store (a
  // JSON body in its parser below, where its raw text says whether to look).
  app.addHook('preValidation', async (request) => {
    for (const part of ['params', 'query', 'body'] as const) {
      const value = request[part];
      if (part === 'body' && typeof value !== 'string') continue;
      const found = unstorablePath(value);
      if (found !== undefined) throw unstorableRefused(found, part);
    }
  });
  app.setNotFoundHandler((request, reply) => {
    void reply
      .status(404)
      .send(
        errorBody(
          new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`, { field: 'url' }),
        ),
      );
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'PromptPipe',
        version: deps.version,
        description: 'Persistent, tool-using LLM conversations over the channels people already use.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'API_TOKEN: every route' },
          client_token: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A client token from POST /api/tokens: its conversation only, on the routes that list its scopes',
          },
        },
      },
      security: deps.apiToken ? [{ bearer: [] }] : [],
    },
    // Responses, security per operation, the socket's frames and the outbound webhook (issue #20).
    transformObject: (document) =>
      completeDescription('openapiObject' in document ? document.openapiObject : {}, {
        apiToken: Boolean(deps.apiToken),
        metricsPublic: deps.metricsPublic === true,
      }),
  });
  // Before the auth hook: the plugin's own hook must see every upgrade, so that a refused one is closed.
  // A socket's `message` frame carries what `POST …/message` does: the same size limit as a body.
  await app.register(websocket, { options: { maxPayload: deps.maxBodyBytes }, errorHandler: socketError });
  await registerCors(app, deps.corsOrigins ?? []);
  // Wall time, not the conversation clock: every process must agree on when a token expires.
  const signer = new TokenSigner(deps.tokenSecret ?? deps.apiToken);
  const tickets = new TicketBook(signer);
  app.decorateRequest('principal', null);
  if (deps.apiToken) {
    const failures = deps.authFailureLimit && new FailureLimiter(deps.authFailureLimit);
    registerAuth(app, {
      token: deps.apiToken,
      signer,
      tickets,
      failures,
      publicPaths: deps.metricsPublic ? ['/metrics'] : [],
    });
    // The OpenAPI document says which routes a client token may use, and with which scopes.
    app.addHook('onRoute', (route) => {
      const scopes = route.config?.clientScopes;
      if (scopes && route.schema && !route.schema.hide)
        route.schema = { ...route.schema, security: [{ bearer: [] }, { client_token: [...scopes] }] };
    });
  }

  resource(app, '/health', {
    GET: {
      schema: {
        tags: ['server'],
        summary:
          'Overall status (ok | degraded | down) and each dependency: store, model, channels, timer worker, queues',
      },
      handler: async (_request, reply) => {
        const store = await checkStore(deps.store, deps.healthTimeoutMs);
        const model = deps.modelHealth?.status;
        const channels = deps.channelHealth?.status;
        const worker = deps.timerWorker?.progress;
        const queues = store.ok ? await queuesOf(deps, deps.healthTimeoutMs) : undefined;
        const now = new Date(); // wall time: the worker's last pass is wall time
        // Down (503) when the store cannot serve; degraded (200) while something fails but messages wait.
        const { status, problems } = overallHealth({ store, model, channels, timerWorker: worker, queues, now });
        const body = {
          status,
          problems,
          store: deps.store.dialect,
          store_ok: store.ok,
          ...(store.ok ? {} : { store_problem: store.problem }),
          model: deps.model,
          ...(model ? { model_status: model } : {}),
          ...(channels ? { channels } : {}),
          ...(worker
            ? {
                timer_worker: {
                  running: worker.running,
                  last_pass_at: worker.lastProgressAt?.toISOString() ?? null,
                  last_pass_age_s: worker.lastProgressAt
                    ? Math.round((now.getTime() - worker.lastProgressAt.getTime()) / 1000)
                    : null,
                },
              }
            : {}),
          backlog: deps.engine.backlog,
          ...(queues === undefined ? {} : { queues }),
        };
        return reply.status(store.ok ? 200 : 503).send(body);
      },
    },
  });
  resource(app, '/openapi.json', {
    GET: { schema: { tags: ['server'], summary: 'This document (OpenAPI 3.1)' }, handler: async () => app.swagger() },
  });
  if (deps.metrics) metricsRoute(app, deps.metrics);
  const host: RouteHost = {
    conversation: (id, field) => conversationById(deps, id, field),
    exclusive: (conversationId, work) => deps.engine.exclusive(conversationId, work),
    trigger: (conversationId, input) => deps.engine.queueEvent(conversationId, input),
  };
  for (const routes of deps.moduleRoutes ?? []) routes(app, host);
  participantRoutes(app, deps);
  inboundRoutes(app, deps);
  adminRoutes(app, deps);
  consoleRoutes(app, deps.changes);
  sessionRoutes(app, deps);
  uiStreamRoute(app, deps);
  tokenRoutes(app, { ...deps, tickets, signer });
  if (deps.goPlatform) goPlatformRoutes(app, { ...deps, ...deps.goPlatform });
  if (deps.whatsapp) whatsappRoutes(app, { ...deps, whatsapp: deps.whatsapp });
  if (deps.twilio) twilioRoutes(app, { ...deps, twilio: deps.twilio });
  return app;
}

/**
 * What waits, for `/health`: pending messages and deliveries, timers past due, and how old the
 * oldest of each is (seconds, on the conversation clock). Null when the store does not answer in time.
 */
async function queuesOf(deps: AppDeps, timeoutMs = HEALTH_TIMEOUT_MS) {
  const now = deps.clock.now();
  const age = (date: Date | null) => (date ? Math.max(0, Math.round((now.getTime() - date.getTime()) / 1000)) : null);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
  try {
    const backlog = await Promise.race([deps.store.backlog(now).catch(() => null), late]);
    if (!backlog) return null;
    return {
      turns: deps.engine.backlog,
      inbox_pending: backlog.inboxPending,
      oldest_inbox_age_s: age(backlog.oldestInboxAt),
      outbox_pending: backlog.outboxPending,
      oldest_outbox_age_s: age(backlog.oldestOutboxAt),
      timers_overdue: backlog.timersOverdue,
      timer_lateness_s: age(backlog.oldestOverdueTimerAt),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Whether JSON.parse takes it: the default parser refused it for a poisoning key, not its syntax. */
function parsesPlainly(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `\u0000`, or a `\uD800`–`\uDFFF` escape (half of a pair, or a whole pair: the walk tells). */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

function unstorableRefused({ path, what }: { path: string; what: string }, part: string): AppError {
  const field = path || part;
  return new AppError('invalid_request', `${field}: must not contain ${what}`, { field });
}

/**
 * A frame the WebSocket protocol refuses (too large, not UTF-8, a bad opcode) is the client's
 * error: `ws` has already closed the socket with the code that says why (1009, 1007, 1002), so it
 * is a warning, not a server error with its stack. Anything else ends the socket.
 */
function socketError(error: Error & { code?: string }, socket: WebSocket, request: FastifyRequest): void {
  if (error.code?.startsWith('WS_ERR_')) {
    request.log.warn({ code: error.code, reason: error.message }, 'websocket frame refused');
    return;
  }
  request.log.error({ err: error }, 'websocket failed');
  socket.terminate();
}
