import { context, SpanKind, SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import type { TurnInput } from '../engine/flow.ts';
import type { TurnBroadcaster, TurnBroadcast } from '../engine/turn-broadcast.ts';
import { TurnRunner, type TurnRunnerDeps, type TurnSignals, type TurnSummary } from '../engine/turn-runner.ts';
import type { Store } from '../store/store.ts';
import { inSpan, type Tracing } from './tracing.ts';

/** Conversations whose flow is remembered (it never changes): a bound on memory, not on correctness. */
const MAX_REMEMBERED_FLOWS = 10_000;

/**
 * The turn spans (decision 021), from outside the engine: a span per `TurnRunner.run`, child of
 * whatever was active when the turn was queued (the inbound request or webhook that brought its
 * message, so the turn continues the caller's trace), and a span per tool call, from the turn's
 * broadcast. The running turn's trace id is kept per conversation (one turn at a time each) for
 * the turn record: its commit may run in another turn's group (decision 020), so the active span
 * there is not necessarily its own.
 */
export class TurnTraces {
  readonly #tracing: Tracing;
  readonly #store: Pick<Store, 'getConversation'>;
  readonly #running = new Map<string, Span>();
  readonly #flows = new Map<string, string>();

  constructor(tracing: Tracing, store: Pick<Store, 'getConversation'>) {
    this.#tracing = tracing;
    this.#store = store;
  }

  /** The trace of the conversation's running turn. */
  readonly traceIdOf = (conversationId: string): string | undefined =>
    this.#running.get(conversationId)?.spanContext().traceId;

  async run(conversationId: string, input: TurnInput, work: () => Promise<TurnSummary>): Promise<TurnSummary> {
    const flow = await this.#flowOf(conversationId);
    // The request that brought the message, wherever and whenever that was (else what is active).
    const parent =
      input.kind === 'message' && input.traceParent
        ? this.#tracing.extract({ traceparent: input.traceParent })
        : context.active();
    const span = this.#tracing.tracer.startSpan(
      `turn ${flow ?? ''}`.trim(),
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'promptpipe.conversation.id': conversationId,
          'gen_ai.conversation.id': conversationId,
          ...(flow ? { 'promptpipe.flow': flow } : {}),
          'promptpipe.turn.trigger': input.kind === 'message' ? 'message' : input.trigger,
          ...(input.kind === 'message' ? { 'promptpipe.inbox.id': input.inboxId } : {}),
          ...(input.kind === 'message' && input.batch ? { 'promptpipe.turn.messages': input.batch.length } : {}),
        },
      },
      parent,
    );
    this.#running.set(conversationId, span);
    try {
      return await inSpan(span, work, (summary) =>
        span.setAttributes({ 'promptpipe.turn.id': summary.turnId, 'promptpipe.turn.status': summary.status }),
      );
    } finally {
      if (this.#running.get(conversationId) === span) this.#running.delete(conversationId);
    }
  }

  /** The broadcaster, with a span per tool call (`execute_tool {name}`, as the GenAI conventions name it). */
  broadcaster(inner: TurnBroadcaster): TurnBroadcaster {
    return {
      begin: async (conversationId, replyMessageId, inboxId) =>
        withToolSpans(
          await inner.begin(conversationId, replyMessageId, inboxId),
          this.#tracing,
          // The turn's span: `begin` runs inside it.
          context.active(),
        ),
    };
  }

  /** The conversation's flow, read once per conversation (and not at all when the lookup fails). */
  async #flowOf(conversationId: string): Promise<string | undefined> {
    const known = this.#flows.get(conversationId);
    if (known) return known;
    const conversation = await this.#store.getConversation(conversationId).catch(() => undefined);
    if (!conversation) return undefined;
    if (this.#flows.size >= MAX_REMEMBERED_FLOWS) this.#flows.clear();
    this.#flows.set(conversationId, conversation.flow);
    return conversation.flow;
  }
}

function withToolSpans(broadcast: TurnBroadcast, tracing: Tracing, parent: Context): TurnBroadcast {
  const open = new Map<string, Span>();
  const endOpen = () => {
    for (const span of open.values()) span.end();
    open.clear();
  };
  return {
    modelCallStarted: () => broadcast.modelCallStarted(),
    allowCode: () => broadcast.allowCode(),
    textDelta: (delta) => broadcast.textDelta(delta),
    approvalRequested: (request) => broadcast.approvalRequested(request),
    toolStarted: (call) => {
      const span = tracing.tracer.startSpan(
        `execute_tool ${call.name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': call.name,
            'gen_ai.tool.call.id': call.id,
            'gen_ai.tool.type': 'function',
          },
        },
        parent,
      );
      open.set(call.id, span);
      broadcast.toolStarted(call);
    },
    toolFinished: (executed) => {
      const span = open.get(executed.call.id);
      if (span) {
        open.delete(executed.call.id);
        span.setAttribute('promptpipe.tool.status', executed.outcome.status);
        // The model read the error result and went on; the text stays out of the span (personal data).
        if (executed.outcome.status === 'error') {
          span.setAttribute('error.type', 'tool_error');
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      }
      broadcast.toolFinished(executed);
    },
    metrics: () => broadcast.metrics(),
    commit: (work) => broadcast.commit(work),
    committed: (turnId) => {
      endOpen();
      return broadcast.committed(turnId);
    },
    cancelled: (reason, code) => {
      endOpen();
      return broadcast.cancelled(reason, code);
    },
  };
}

/** The turn runner, each turn in a span (see `TurnTraces`); the runner itself is untouched. */
export class TracedTurnRunner extends TurnRunner {
  readonly #traces: TurnTraces;

  constructor(deps: TurnRunnerDeps, traces: TurnTraces) {
    super({
      ...deps,
      traceIdOf: traces.traceIdOf,
      broadcaster: deps.broadcaster && traces.broadcaster(deps.broadcaster),
    });
    this.#traces = traces;
  }

  override run(conversationId: string, input: TurnInput, signals: TurnSignals): Promise<TurnSummary> {
    return this.#traces.run(conversationId, input, () => super.run(conversationId, input, signals));
  }
}
