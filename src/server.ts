import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ChannelDirectory, type Channel } from './channels/channel.ts';
import { createTwilioChannel } from './channels/twilio/twilio-channel.ts';
import { createWebhookChannel } from './channels/webhook-channel.ts';
import { createWhatsAppChannel } from './channels/whatsapp/whatsapp-channel.ts';
import { createWebChannel } from './channels/web-channel.ts';
import type { AppConfig } from './config/config.ts';
import { randomIds, systemClock, type Clock, type IdGenerator } from './core/clock.ts';
import { ChangeFeed } from './engine/change-feed.ts';
import { EventHub } from './events/event-hub.ts';
import { startPgFanout, type PgFanout } from './events/pg-fanout.ts';
import { EventFollowers } from './events/event-followers.ts';
import { ConversationLeases } from './engine/conversation-lease.ts';
import { databaseClock } from './timers/database-clock.ts';
import { createTurnBroadcaster } from './events/turn-broadcaster.ts';
import { Engine } from './engine/engine.ts';
import { InboundService } from './engine/inbound-service.ts';
import { OutboxDispatcher } from './engine/outbox-dispatcher.ts';
import { Outgoing } from './engine/outgoing.ts';
import { ParticipantService } from './engine/participant-service.ts';
import { TurnRunner, type TurnRunnerDeps } from './engine/turn-runner.ts';
import { SlidingWindowThrottle } from './engine/turn-throttle.ts';
import type { FlowModule, StartedFlowModule } from './flows/flow-module.ts';
import { FLOW_MODULES } from './flows/registry.ts';
import { buildApp } from './http/app.ts';
import { loadCustomGenerator } from './http/go-platform/custom-generator.ts';
import { goScheduleTimerKind } from './http/go-platform/schedule-timer.ts';
import { conversationGone } from './http/session-stream.ts';
import type { LlmProvider } from './llm/llm-provider.ts';
import { ModelHealth } from './llm/model-health.ts';
import { Metrics } from './observability/metrics.ts';
import { ChannelHealth, ObservedChannelGate } from './observability/observed-gate.ts';
import { TracedTurnRunner, TurnTraces } from './observability/traced-turns.ts';
import { traceModelCalls, Tracing } from './observability/tracing.ts';
import { createOfflineDemoProvider } from './llm/offline/offline-demo-provider.ts';
import { createOpenAiCompatibleProvider } from './llm/openai-compatible-provider.ts';
import { openStore, type OpenStoreOptions } from './store/open-store.ts';
import type { Store } from './store/store.ts';
import type { ClockControlDeps } from './timers/clock-control.ts';
import { TimerKindRegistry, type TimerKind } from './timers/timer-kinds.ts';
import { TimerWorker } from './timers/timer-worker.ts';
import { VirtualClock, virtualClockStart } from './timers/virtual-clock.ts';

export const VERSION = '0.1.0';

/** Test seams: everything else comes from the config. */
export interface ServerOverrides {
  provider?: LlmProvider;
  /** Replaces the generic webhook channel. */
  channel?: Channel;
  /** Test seam for the provider channels' HTTP calls. */
  fetch?: typeof fetch;
  ids?: IdGenerator;
  random?: () => number;
  /** Test seam for store faults: wraps the opened store (a disk that fills up, say). */
  wrapStore?: (store: Store) => Store;
  /** Test seam: how long a turn waits out a database that cannot serve (default 10 minutes). */
  outageWaitMs?: number;
  /** Test seam: see `OpenStoreOptions.onSqliteOpen`. */
  onSqliteOpen?: OpenStoreOptions['onSqliteOpen'];
  /** Test seam: the flows to run in place of `FLOW_MODULES` (the first is the default). */
  flowModules?: readonly FlowModule[];
}

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  engine: Engine;
  inbound: InboundService;
  events: EventHub;
  clock: Clock;
  url: string;
  /**
   * Resolves once nothing is left to do right now: no turn queued or running, no delivery in
   * flight or due. What a test waits on before it says "nothing more was sent".
   */
  settle(): Promise<void>;
  /** Stops accepting, drains turns, timers and deliveries, closes the store. Safe to call twice. */
  close(): Promise<void>;
}

/** The configured model; the offline demo model follows the rules the flow modules bring. */
export function createProvider(config: AppConfig, modules: readonly FlowModule[]): LlmProvider {
  if (config.llm.provider === 'offline')
    return createOfflineDemoProvider(modules.flatMap((module) => module.offlinePolicy ?? []));
  return createOpenAiCompatibleProvider({
    baseUrl: config.llm.baseUrl!,
    apiKey: config.llm.apiKey,
    model: config.llm.model,
    temperature: config.llm.temperature,
    timeoutMs: config.llm.timeoutMs,
    maxRetries: config.llm.maxRetries,
  });
}

/**
 * The channels this server runs; the first is where new participants are reached unless their
 * enrollment says otherwise: WhatsApp when configured, else Twilio SMS, else the generic webhook.
 */
function createChannels(
  config: AppConfig,
  deps: {
    logger: Logger;
    webhook: Channel | undefined;
    fetch: typeof fetch | undefined;
  },
): ChannelDirectory {
  const { logger, fetch } = deps;
  const providers: Channel[] = [];
  if (config.whatsapp) providers.push(createWhatsAppChannel({ ...config.whatsapp, fetch }));
  if (config.twilio) providers.push(createTwilioChannel({ ...config.twilio, fetch }));
  if (config.whatsapp && !config.whatsapp.template)
    logger.warn('WHATSAPP_TEMPLATE_NAME is not set: messages outside the 24-hour window cannot be sent');
  if (config.outbound.webhookUrl && !config.outbound.webhookSigningKey && !deps.webhook) {
    logger.warn('OUTBOUND_WEBHOOK_SECRET is not set: outbound webhooks are sent unsigned');
  }
  // Wall time for the signature's timestamp: the receiver checks it against its own clock.
  const webhook =
    deps.webhook ??
    createWebhookChannel({
      url: config.outbound.webhookUrl,
      signingKey: config.outbound.webhookSigningKey,
      now: () => systemClock.now(),
      logger,
    });
  return new ChannelDirectory([...providers, webhook, createWebChannel()]);
}

/** Beyond one model call, what a turn may spend without reporting progress (a tool, its commit). */
const LEASE_STALL_MARGIN_MS = 60_000;

/** A virtual clock that continues from where the last run left it (kept in the store). */
async function resumeVirtualClock(store: Store, configured: Date | undefined, logger: Logger): Promise<VirtualClock> {
  const saved = await store.getVirtualClock();
  const start = virtualClockStart(saved, configured, new Date());
  await store.saveVirtualClock(start);
  logger.info({ now: start.toISOString(), resumed: start === saved }, 'virtual clock');
  return new VirtualClock(start);
}

/** The composition root: the only place adapters are chosen and wired. */
export async function startServer(
  config: AppConfig,
  logger: Logger,
  overrides: ServerOverrides = {},
): Promise<RunningServer> {
  const ids = overrides.ids ?? randomIds;
  const random = overrides.random ?? Math.random;
  // Configuration files first: a mistake in one stops start-up before anything is opened.
  const flowModules = overrides.flowModules ?? FLOW_MODULES;
  const modules = flowModules.map((module) => module.load(config, logger));
  const customGenerator = config.platform.customGenerator
    ? await loadCustomGenerator(config.platform.customGenerator)
    : undefined;
  const opened = await openStore(config.database.url, {
    ...config.database,
    logger,
    onSqliteOpen: overrides.onSqliteOpen,
  });
  const store = overrides.wrapStore?.(opened) ?? opened;
  const virtualClock =
    config.clock.mode === 'virtual' ? await resumeVirtualClock(store, config.clock.start, logger) : undefined;
  // Several processes may share PostgreSQL: its clock decides what is due and when leases end.
  const dbClock = !virtualClock && store.dialect === 'postgres' ? await databaseClock(store, logger) : undefined;
  const clock: Clock = virtualClock ?? dbClock ?? systemClock;
  // SQLite is one process: whoever held a lease before this start is gone.
  if (store.dialect === 'sqlite') await store.clearLeases();
  // Read at each scrape; set once the engine, dispatcher and event hub exist.
  const metrics: Metrics = new Metrics({
    turnBacklog: (): number => engine.backlog,
    deliveriesInFlight: (): number => dispatcher.inFlight,
    streamClients: (): number => events.subscribers,
  });
  // Off unless an OTLP endpoint is configured (decision 021); then the model, turns, tools,
  // deliveries and requests each get spans, from wrappers around them.
  const tracing = config.tracing && new Tracing(config.tracing, VERSION);
  const modelHealth = new ModelHealth(metrics);
  const model = overrides.provider ?? createProvider(config, flowModules);
  const provider = modelHealth.observe(tracing ? traceModelCalls(tracing, model) : model);
  const channels = createChannels(config, { logger, webhook: overrides.channel, fetch: overrides.fetch });
  const channelHealth = new ChannelHealth();
  const gate = new ObservedChannelGate(
    {
      store,
      clock,
      logger,
      // Set once the participant service exists; nothing is sent before start-up ends.
      unsubscribed: (participantId): Promise<void> => participants.pause(participantId),
    },
    { health: channelHealth, tracing },
  );
  const outgoing = new Outgoing({ ids, channels });
  const host = { config, store, provider, clock, ids, random, logger };
  const started: StartedFlowModule[] = [];
  for (const module of modules) started.push(await module.start(host));
  const flows = new Map(started.map(({ flow }) => [flow.id, flow]));
  const defaultFlow = started[0]!.flow.id;

  const dispatcher = new OutboxDispatcher({
    store,
    channels,
    gate,
    observer: metrics,
    clock,
    logger,
    maxAttempts: config.outbound.maxAttempts,
    concurrency: config.outbound.concurrency,
    othersWorking: (): boolean => engine.backlog > 0,
  });
  let fanout: PgFanout | undefined;
  const owner = `${hostname()}:${process.pid}:${randomIds.next('proc')}`;
  const wallTime = () => (dbClock ?? systemClock).now(); // never the virtual clock
  // Several processes (PostgreSQL): a commit tells the others only if one follows the conversation.
  const followers =
    store.dialect === 'postgres'
      ? new EventFollowers({ store, owner, now: wallTime, logger, catchUp: (id) => events.catchUp(id) })
      : undefined;
  const events = new EventHub({
    store,
    clock,
    logger,
    written: (id) => fanout?.notify(id),
    following: (id, on) => followers?.set(id, on),
    ended: (id) => fanout?.notifyGone(id),
  });
  const leases = new ConversationLeases({
    store,
    logger,
    shared: store.dialect === 'postgres',
    owner,
    now: wallTime,
    // A turn reports progress at each model and tool call; the longest silence is one model call.
    stallMs: config.llm.timeoutMs + LEASE_STALL_MARGIN_MS,
    hooks: { acquired: (id) => events.catchUp(id), releasing: (id) => events.flush(id) },
    released: (id) => fanout?.notifyReleased(id),
    wanted: (id) => fanout?.notifyWanted(id),
  });
  const runnerDeps: TurnRunnerDeps = {
    store,
    provider,
    flows,
    clock,
    ids,
    logger,
    outgoing,
    deliveries: dispatcher,
    historyLimit: config.conversation.chatHistoryLimit,
    toolCallLimits: config.llm.toolCallLimits,
    broadcaster: createTurnBroadcaster(events),
    observer: metrics,
    othersWorking: (): boolean => engine.backlog > 1,
    eventFollowers: followers && { owner, now: wallTime },
  };
  const runner = tracing
    ? new TracedTurnRunner(runnerDeps, new TurnTraces(tracing, store))
    : new TurnRunner(runnerDeps);
  const changes = new ChangeFeed();
  // Whatever else wrote to a conversation (a timer's prompt, an operator) reaches its stream too.
  // Under the conversation's lease: the event log has one writer at a time, across processes.
  // A turn already streamed its own messages; anything else (a timer, an operator) is synced here.
  const syncFailed = (conversationId: string) => (error: unknown) =>
    logger.warn({ conversationId, err: error }, 'event stream not synced; the next change or reconnect catches it up');
  changes.subscribe(
    (id, origin) =>
      void (
        origin === 'other' && engine.exclusive(id, () => events.syncMessages(id), { quiet: true }).catch(syncFailed(id))
      ),
  );
  // Wall time: a virtual clock would hold every message past the limit until it is moved.
  const throttle = config.limits.turns && new SlidingWindowThrottle({ ...config.limits.turns, clock: systemClock });
  const engine = new Engine({
    store,
    runner,
    dispatcher,
    clock,
    logger,
    changes,
    leases,
    throttle,
    outageWaitMs: overrides.outageWaitMs,
    modelOutageNotice: config.llm.outageNotice,
  });
  const participants = new ParticipantService({
    store,
    engine,
    flows,
    defaultFlow,
    channels,
    gate,
    clock,
    ids,
    logger,
  });
  const inbound = new InboundService({
    store,
    engine,
    participants,
    channels,
    gate,
    outgoing,
    clock,
    ids,
    logger,
    autoEnroll: config.conversation.autoEnrollNewUsers,
    ...(tracing ? { traceParent: tracing.traceParent } : {}),
  });
  const kinds = new TimerKindRegistry().register(
    ...started.flatMap((module) => module.timerKinds?.({ ...host, outgoing }) ?? []),
    goScheduleTimerKind({ ...host, outgoing, customGenerator }) as TimerKind<never>,
  );
  const worker = new TimerWorker({
    store,
    kinds,
    clock,
    ids,
    logger,
    serialize: (id, work) => engine.exclusive(id, work),
  });
  // Turns first, then deliveries (a turn queues them), then any turn a delivery outcome queued.
  const settle = async () => {
    await engine.idle();
    await dispatcher.kick();
    await engine.idle();
  };
  const clockControl: ClockControlDeps | undefined = virtualClock && {
    clock: virtualClock,
    store,
    worker,
    // A conversation whose turns wait for the rate limit (wall time, up to a minute) holds no move
    // of the clock: what the fired timers caused is settled without it.
    settle: async () => {
      await engine.idle({ exceptThrottled: true });
      await dispatcher.kick();
      await engine.idle({ exceptThrottled: true });
    },
  };
  const app = await buildApp({
    store,
    engine,
    changes,
    events,
    participants,
    inbound,
    logger,
    clock,
    clockControl,
    apiToken: config.server.apiToken,
    tokenSecret: config.server.tokenSecret,
    authFailureLimit: config.limits.authFailures,
    maxBodyBytes: config.server.maxBodyBytes,
    corsOrigins: config.server.corsOrigins,
    phoneRegion: config.conversation.phoneRegion,
    model: { provider: provider.name, model: provider.model },
    modelHealth,
    channelHealth,
    timerWorker: worker,
    tracing,
    metrics,
    metricsPublic: config.server.metricsPublic,
    moduleRoutes: started.flatMap((module) => (module.routes ? [module.routes.bind(module)] : [])),
    version: VERSION,
    whatsapp: config.whatsapp,
    twilio: config.twilio,
    goPlatform: {
      outgoing,
      ids,
      provider,
      realModel: provider.name !== 'offline-demo',
      defaultSchedule: config.platform.defaultSchedule,
      customGenerator,
    },
  });

  if (store.dialect === 'postgres') {
    fanout = await startPgFanout({
      url: config.database.url,
      schema: config.database.schema,
      logger,
      connectTimeoutMs: config.database.connectTimeoutMs,
      queryTimeoutMs: config.database.queryTimeoutMs,
      written: (id) => void (events.followed(id) && events.catchUp(id).catch(syncFailed(id))),
      gone: (id) => events.endHere(id, conversationGone(id, clock.now())),
      released: (id) => leases.wake(id),
      wanted: (id) => leases.wantedElsewhere(id),
      // Notifications may have been missed meanwhile: new events, and conversations deleted.
      reconnected: () =>
        void events
          .catchUpFollowed()
          .then(() => events.endDeleted((id) => conversationGone(id, clock.now())))
          .catch(syncFailed('*')),
    });
  }
  // Pending messages with no turn queued: their receiver died (PostgreSQL, several processes), or
  // a turn failed and could not even record that (a full disk), which stops its conversation's
  // drain until a sweep queues it again.
  engine.startSweeper(5000);
  const address = await app.listen({ host: config.server.host, port: config.server.port });
  dispatcher.start();
  // With a virtual clock, timers fire only when the clock is moved (POST /admin/clock).
  if (!virtualClock) worker.start();
  await engine.recover();
  await queueOwedTurns(started, engine);
  if (!config.server.apiToken)
    logger.warn(
      { host: config.server.host },
      'API_TOKEN is not set: anyone who can reach this address can use the API',
    );
  logger.info(
    { url: address, store: store.dialect, provider: provider.name, model: provider.model, clock: config.clock.mode },
    'PromptPipe is listening',
  );

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await app.close();
      await worker.stop();
      await engine.shutdown(config.server.shutdownTimeoutMs);
      await events.flushAll();
      await followers?.close();
      await fanout?.close();
      for (const module of started) await module.stop?.();
      dbClock?.stop();
      await store.close();
      // Last: the spans of everything above are sent before the process goes.
      await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces not all sent'));
    })();
    return closing;
  };
  return { app, store, engine, inbound, events, clock, url: address, settle, close };
}

/** Event turns the modules still owe from before a restart (a decided approval not yet resumed). */
async function queueOwedTurns(started: readonly StartedFlowModule[], engine: Engine): Promise<void> {
  for (const module of started)
    for (const { conversationId, input } of (await module.owedTurns?.()) ?? [])
      engine.queueEvent(conversationId, input);
}
