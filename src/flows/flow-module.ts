import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config.ts';
import type { Clock, IdGenerator } from '../core/clock.ts';
import type { Conversation } from '../core/domain.ts';
import type { Flow, TurnInput } from '../engine/flow.ts';
import type { Outgoing } from '../engine/outgoing.ts';
import type { LlmProvider } from '../llm/llm-provider.ts';
import type { OfflinePolicy } from '../llm/offline/offline-demo-provider.ts';
import type { Store } from '../store/store.ts';
import type { TimerKind } from '../timers/timer-kinds.ts';

/**
 * A conversation flow as a plug-in (decision 019): one folder that brings its flow, its timer
 * kinds and its resources, and one line in `FLOW_MODULES`. The composition root loops over the
 * registry and knows nothing of any flow's specifics.
 *
 * Three phases, so that a mistake stops start-up as early as it can be seen:
 * `load` (configuration files, before anything is opened) → `start` (the store is open) →
 * `timerKinds` (the outgoing messages exist).
 */
export interface FlowModule {
  readonly id: string;
  /** The flow's rules for the offline demo model; none for a flow that calls no model. */
  readonly offlinePolicy?: OfflinePolicy;
  /** Reads and checks the module's own settings and files; throws on a mistake. */
  load(config: AppConfig, logger: Logger): LoadedFlowModule;
}

export interface LoadedFlowModule {
  start(host: FlowHost): Promise<StartedFlowModule>;
}

/** What every module may use once the store is open. */
export interface FlowHost {
  readonly config: AppConfig;
  readonly store: Store;
  readonly provider: LlmProvider;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly random: () => number;
  readonly logger: Logger;
}

/**
 * What a module may use to build its timer kinds. The worker runs each firing in the
 * conversation's turn queue: a kind never serializes anything itself.
 */
export interface TimerHost extends FlowHost {
  readonly outgoing: Outgoing;
}

export type EventInput = Extract<TurnInput, { kind: 'event' }>;

/** What a module's HTTP routes may use besides what `start` had: the engine's queue. */
export interface RouteHost {
  /** A conversation by its id or by its participant's id; `not_found` naming `field` when neither. */
  conversation(id: string, field: string): Promise<Conversation>;
  /** Runs `work` with the conversation to itself (its turn queue here, its lease everywhere). */
  exclusive<T>(conversationId: string, work: () => Promise<T>): Promise<T>;
  /** Queues an event turn of the conversation (its failures are logged, never thrown). */
  trigger(conversationId: string, input: EventInput): void;
}

export interface StartedFlowModule {
  readonly flow: Flow;
  /** HTTP routes of the module's own (the study overview, approvals); behind the API's auth. */
  routes?(app: FastifyInstance, host: RouteHost): void;
  /**
   * Event turns the module owes after a restart (an approval decided just before the process
   * stopped, its resume not yet run). Asked once the engine has recovered its inbox.
   */
  owedTurns?(): Promise<ReadonlyArray<{ conversationId: string; input: EventInput }>>;
  timerKinds?(host: TimerHost): ReadonlyArray<TimerKind<never>>;
  /** Releases what `start` opened (connections to tool servers), after the engine has drained. */
  stop?(): Promise<void>;
}
