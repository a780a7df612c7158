import { unmeasuredTurn } from '../core/turn-record.ts';
import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '../core/clock.ts';
import type { Conversation, Message } from '../core/domain.ts';
import type { OutboxDispatcher } from './outbox-dispatcher.ts';
import { AppError, describeError, isAppError, isModelUnavailable } from '../core/errors.ts';
import type { LlmProvider, LlmToolCall } from '../llm/llm-provider.ts';
import type { EnginePort, EngineTx, FlowContextRead, FlowReads, FlowWrites, TurnContext } from '../store/store.ts';
import type { EarlyContext } from './read-ahead.ts';
import { answeredMessages, type ApprovalRequest, type Flow, type PreparedTurn, type TurnInput } from './flow.ts';
import { buildModelMessages, HISTORY_WINDOW } from './model-context.ts';
import { HistoryCache } from './history-cache.ts';
import type { TurnBroadcaster, TurnBroadcast } from './turn-broadcast.ts';
import type { Outgoing } from './outgoing.ts';
import { plainReply } from './plain-text.ts';
import { toolCallRecords, turnRecord } from './turn-records.ts';
import { TurnCommit, userMessage } from './turn-commit.ts';
import { runToolLoop, type ExecutedToolCall } from './tool-loop.ts';
import type { ToolCallLimits } from './tool-call-limits.ts';
import type { EngineObserver } from '../observability/metrics.ts';

/**
 * What the person is told when their message cannot be answered for good (the model refused the
 * request: a bad key, an unknown model; or the turn keeps failing). It promises nothing more.
 */
export const MODEL_FAILURE_REPLY = "Sorry, something went wrong on our side, so I can't reply to this.";

/** The default notice while the model cannot be reached: true, because the turn waits and runs again. */
export const MODEL_OUTAGE_NOTICE =
  "I'm having trouble reaching my language model right now. I'll answer your message as soon as it's back.";

/**
 * What a turn's transactions hand it: the engine's writes of a turn, and the flow's, which
 * `prepared.commit(tx)` makes in the same unit of work (`FlowWrites`).
 */
export type TurnTx = Pick<
  EngineTx,
  | 'markOutboxSentMany'
  | 'lockActiveParticipant'
  | 'getConversation'
  | 'getParticipant'
  | 'appendMessages'
  | 'enqueueOutbox'
  | 'updateConversationFenced'
  | 'insertTurn'
  | 'completeInbox'
  | 'completeInboxFenced'
  | 'appendEvents'
  | 'followedElsewhere'
> &
  FlowWrites;

/**
 * The turn runner's view of the store: the turn's context, its transactions, and what a flow
 * reads while it prepares the turn (the runner hands itself over as `TurnRequest.store`).
 */
export type TurnStore = Pick<EnginePort<TurnTx>, 'getTurnContext' | 'transaction'> & FlowReads;

export interface TurnRunnerDeps {
  store: TurnStore;
  provider: LlmProvider;
  flows: ReadonlyMap<string, Flow>;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  /** Renders and queues what the turn sends. */
  outgoing: Outgoing;
  /** How many transcript messages the model reads (0..50). */
  historyLimit: number;
  /** Monotonic milliseconds for durations. */
  elapsed?: () => number;
  /** The live audience of turns (the session event stream), when there is one. */
  broadcaster?: TurnBroadcaster;
  /** This process's dispatcher: a turn's replies go to it straight from the commit (decision 009). */
  deliveries?: Pick<OutboxDispatcher, 'claimUntil' | 'deliverClaimed' | 'takeMarks' | 'marksWritten' | 'restoreMarks'>;
  /** Tool calls run per model response and per turn, in every flow's loop (default 8 and 24). */
  toolCallLimits?: ToolCallLimits;
  /** True while other turns run in this process: a commit may wait a moment to share theirs (group commit). */
  othersWorking?: () => boolean;
  /** Told of each committed turn and its tool calls (metrics). */
  observer?: Pick<EngineObserver, 'turnFinished' | 'toolCalled'>;
  /** The trace of the conversation's running turn (tracing on), kept in its turn record. */
  traceIdOf?: (conversationId: string) => string | undefined;
  /**
   * Several processes (PostgreSQL): a turn's commit asks whether another one follows the
   * conversation's events (`owner` names this process; `now` is wall time), and other processes
   * are told of the commit only if one does (decision 020).
   */
  eventFollowers?: { owner: string; now: () => Date };
}

export interface TurnSummary {
  turnId: string;
  status: 'completed' | 'failed' | 'skipped' | 'cancelled';
  reply: string | null;
  /** The turn's replies went straight to this process's dispatcher (nothing for a claim to find). */
  handedOff?: boolean;
}

/** How a turn may be stopped: `shutdown` abandons it (it re-runs later), `interrupt` ends it without a reply. */
export interface TurnSignals {
  shutdown: AbortSignal;
  /** Aborted to end the turn without a reply, and by its owner at shutdown too (then `shutdown` is aborted first). */
  interrupt?: AbortSignal;
  /** Called as the turn moves forward (each model call and tool call), to keep its lease. */
  progress?: () => void;
  /** Which run of the turn this is (1 unless earlier runs failed and it is retried); in its record. */
  attempt?: number;
  /**
   * The turn's context, read before the turn started (`TurnRunner.readContext`) while nothing but
   * this turn could change the conversation. Used when read against the history the runner still
   * knows; otherwise, or when that read failed, the turn reads again.
   */
  context?: EarlyContext;
}

/** Runs one turn of one conversation. The caller guarantees no other turn of it runs meanwhile. */
export class TurnRunner {
  readonly #deps: TurnRunnerDeps;
  readonly #elapsed: () => number;
  /** The flows' own turn reads, read with every turn's context (each only for its flow). */
  readonly #contextReads: FlowContextRead[];
  /** Recent histories of conversations this runner served: read again only when their transcript changed. */
  readonly #histories = new HistoryCache({ window: HISTORY_WINDOW });
  readonly #commit: TurnCommit;

  constructor(deps: TurnRunnerDeps) {
    this.#deps = deps;
    this.#elapsed = deps.elapsed ?? (() => performance.now());
    this.#commit = new TurnCommit(deps);
    this.#contextReads = [...deps.flows].flatMap(([name, flow]) =>
      flow.contextRead ? [{ flow: name, columns: flow.contextRead }] : [],
    );
  }

  /** The conversation was deleted: its recent history is not kept here any more. */
  forget(conversationId: string): void {
    this.#histories.forget(conversationId);
  }

  /** Starts the read a turn of the conversation begins with, for a turn to come (`TurnSignals.context`). */
  readContext(conversationId: string): EarlyContext {
    const knownThrough = this.#histories.get(conversationId)?.through;
    const read = this.#read(conversationId, knownThrough).catch(() => null);
    return { knownThrough, at: Date.now(), read };
  }

  #read(conversationId: string, knownThrough: number | undefined): Promise<TurnContext | undefined> {
    return this.#deps.store.getTurnContext(conversationId, HISTORY_WINDOW, this.#contextReads, knownThrough);
  }

  async run(conversationId: string, input: TurnInput, signals: TurnSignals): Promise<TurnSummary> {
    const { store, clock, ids } = this.#deps;
    const known = this.#histories.get(conversationId);
    const ahead = signals.context?.knownThrough === known?.through ? signals.context : undefined;
    const context = (ahead && (await ahead.read)) ?? (await this.#read(conversationId, known?.through));
    if (!context) throw new AppError('not_found', `conversation ${conversationId} does not exist`);
    const { conversation, participant, lastSeq } = context;
    const history = context.history ?? known?.messages;
    if (!history) throw new Error(`the store left out the history of ${conversationId} it was not known at`);
    if (context.history) this.#histories.remember(conversationId, lastSeq, context.history);
    const turnId = ids.next('turn');
    if (participant && participant.status !== 'active') return this.#recordOnly(conversation, input, turnId);

    const startedAt = clock.now();
    const started = this.#elapsed();
    const replyId = ids.next('msg');
    const broadcast = await this.#deps.broadcaster?.begin(
      conversation.id,
      replyId,
      input.kind === 'message' ? input.inboxId : null,
    );
    try {
      const flow = this.#flow(conversation);
      const prepared = await flow.prepareTurn({
        turnId,
        conversation,
        participant,
        history,
        input,
        now: startedAt,
        store,
        ...(context.flowColumns ? { contextColumns: context.flowColumns } : {}),
      });
      if (!prepared) {
        await broadcast?.committed(turnId);
        return { turnId, status: 'skipped', reply: null };
      }
      if (prepared.codeAllowed) broadcast?.allowCode();
      const { result, error, executed, interrupted } = await this.#loop(prepared, history, input, signals, broadcast);
      const outcome = interrupted ? {} : prepared.finish(result);
      const reply = interrupted
        ? null
        : result
          ? prepared.codeAllowed
            ? result.text.trim() || prepared.fallbackText
            : plainReply(result.text, prepared.fallbackText)
          : MODEL_FAILURE_REPLY;
      const status = interrupted ? 'cancelled' : error ? 'failed' : 'completed';

      const latency = () => broadcast?.metrics() ?? { firstTokenMs: null, timeToStatusMs: null };
      const done = await this.#commit.commit(
        {
          conversation,
          participant,
          lastSeq,
          input,
          turnId,
          reply: { id: replyId, text: reply },
          prepared,
          outcome,
          records: (now) => ({
            turn: turnRecord({
              turnId,
              conversation,
              input,
              prepared,
              result,
              error,
              status,
              latency: latency(),
              startedAt,
              finishedAt: now,
              totalMs: this.#elapsed() - started,
              traceId: this.#deps.traceIdOf?.(conversation.id) ?? null,
              attempt: signals.attempt ?? 1,
            }),
            calls: toolCallRecords(executed, ids, { conversationId: conversation.id, turnId, startedAt }),
          }),
        },
        // The turn's session events commit with it (decision 020), unless it was interrupted.
        interrupted ? undefined : broadcast,
      );
      if (done.committed) this.#histories.extend(conversationId, lastSeq, done.messages);
      else this.#histories.forget(conversationId);
      if (!done.committed) {
        await broadcast?.committed(turnId);
        return { turnId, status: 'skipped', reply: null };
      }
      const claimed = await done.claimed;
      this.#deps.deliveries?.deliverClaimed(claimed);
      this.#observe(conversation.flow, status, started, executed);
      if (error) this.#deps.logger.warn({ conversationId, turnId, err: error }, 'model failed; apology sent');
      if (interrupted) await broadcast?.cancelled('interrupted');
      else if (!done.announced) await broadcast?.committed(turnId);
      return { turnId, status, reply, ...(claimed.length > 0 ? { handedOff: true } : {}) };
    } catch (error) {
      await broadcast?.cancelled('failed', isAppError(error) ? error.code : 'internal');
      throw error;
    }
  }

  #observe(flow: string, status: string, started: number, executed: readonly ExecutedToolCall[]): void {
    const observer = this.#deps.observer;
    if (!observer) return;
    observer.turnFinished(flow, status, (this.#elapsed() - started) / 1000);
    for (const { call, outcome } of executed) observer.toolCalled(call.name, outcome.status);
  }

  #flow(conversation: Conversation): Flow {
    const flow = this.#deps.flows.get(conversation.flow);
    if (!flow)
      throw new AppError('internal', `no flow named "${conversation.flow}" is configured`, { fault: 'system' });
    return flow;
  }

  async #loop(
    prepared: PreparedTurn,
    history: readonly Message[],
    input: TurnInput,
    signals: TurnSignals,
    broadcast: TurnBroadcast | undefined,
  ) {
    const messages = buildModelMessages(prepared.systemMessages, history, input, this.#deps.historyLimit);
    // Collected as they run, so the audit keeps the calls of a turn whose model later failed.
    const executed: ExecutedToolCall[] = [];
    // The interrupt switch is aborted at shutdown too (the engine's), so it alone stops the loop.
    const signal = signals.interrupt ?? signals.shutdown;
    try {
      const context = {
        provider: this.#deps.provider,
        messages,
        signal,
        elapsed: this.#elapsed,
        toolCallLimits: this.#deps.toolCallLimits,
        onModelCall: () => {
          signals.progress?.();
          broadcast?.modelCallStarted();
        },
        onTextDelta: broadcast ? (delta: string) => broadcast.textDelta(delta) : undefined,
        onToolStart: (call: LlmToolCall) => {
          signals.progress?.();
          broadcast?.toolStarted(call);
        },
        onToolCall: (call: ExecutedToolCall) => {
          signals.progress?.();
          executed.push(call);
          broadcast?.toolFinished(call);
        },
        onAudit: (entry: ExecutedToolCall) => void executed.push(entry),
        onApprovalRequested: (request: ApprovalRequest) => broadcast?.approvalRequested(request),
      };
      const result = prepared.run
        ? await prepared.run(context)
        : await runToolLoop({ ...context, tools: prepared.tools, fallbackText: prepared.fallbackText });
      return { result, error: undefined, executed, interrupted: false };
    } catch (error) {
      if (signals.shutdown.aborted) throw error;
      if (signals.interrupt?.aborted) return { result: undefined, error: undefined, executed, interrupted: true };
      // The model will be back: nothing of this turn commits, and the engine runs it again later.
      if (isModelUnavailable(error)) throw error;
      return { result: undefined, error, executed, interrupted: false };
    }
  }

  /**
   * A message whose turn failed for good (not the model: that gets its apology inside the turn):
   * the message is kept in the transcript, the person gets the apology and the operator a failed
   * turn record, in one small commit that does not depend on whatever made the turn fail. False
   * when even that could not be done.
   */
  async giveUp(
    conversationId: string,
    input: Extract<TurnInput, { kind: 'message' }>,
    error: unknown,
    attempts = 1,
  ): Promise<boolean> {
    const { store, clock, logger, ids } = this.#deps;
    try {
      return await store.transaction(async (tx) => {
        const conversation = await tx.getConversation(conversationId);
        if (!conversation) return false;
        const participant = conversation.participantId
          ? ((await tx.getParticipant(conversation.participantId)) ?? null)
          : null;
        const now = clock.now();
        const kept = [];
        for (const message of answeredMessages(input))
          if (await tx.completeInbox(message.inboxId, 'failed', now, describeError(error))) kept.push(message);
        if (kept.length === 0) return true; // answered meanwhile
        await tx.appendMessages(kept.map((message) => userMessage(ids, conversationId, message.text, null, now)));
        await tx.insertTurn(
          unmeasuredTurn({
            id: ids.next('turn'),
            conversationId,
            inboxId: input.inboxId,
            trigger: 'message',
            module: conversation.subState ?? conversation.flow,
            status: 'failed',
            error: describeError(error),
            startedAt: now,
            finishedAt: now,
            attempts,
          }),
        );
        if (!participant || participant.status === 'active') {
          await this.#deps.outgoing.append(
            tx,
            { conversation, participant },
            [{ text: MODEL_FAILURE_REPLY, source: 'system' }],
            { now, turnId: null },
          );
        }
        return true;
      });
    } catch (giveUpError) {
      logger.error({ conversationId, inboxId: input.inboxId, err: giveUpError }, 'failed turn could not be recorded');
      return false;
    }
  }

  /**
   * Tells the person their message waits for the model (an outage), as a message of its own that
   * the model never reads. False when there is nobody to tell (a paused participant).
   */
  async noticeOutage(conversationId: string, text: string): Promise<boolean> {
    const { store, clock } = this.#deps;
    return store.transaction(async (tx) => {
      const conversation = await tx.getConversation(conversationId);
      if (!conversation) return false;
      const participant = conversation.participantId
        ? ((await tx.getParticipant(conversation.participantId)) ?? null)
        : null;
      if (participant && participant.status !== 'active') return false;
      await this.#deps.outgoing.append(tx, { conversation, participant }, [{ text, source: 'system' }], {
        now: clock.now(),
        turnId: null,
      });
      return true;
    });
  }

  /** An inactive participant's message is kept in the transcript; no model turn runs. */
  async #recordOnly(conversation: Conversation, input: TurnInput, turnId: string): Promise<TurnSummary> {
    const { store, clock } = this.#deps;
    await store.transaction((tx) => this.#commit.keepMessageOnly(tx, conversation, input, clock.now()));
    return { turnId, status: 'skipped', reply: null };
  }
}
