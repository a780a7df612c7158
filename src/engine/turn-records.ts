import type { IdGenerator } from '../core/clock.ts';
import type { Conversation, ToolCallRecord, TurnRecord } from '../core/domain.ts';
import { describeError } from '../core/errors.ts';
import type { PreparedTurn, TurnInput } from './flow.ts';
import type { ExecutedToolCall, ToolLoopResult } from './tool-loop.ts';

/** The audit rows of a turn's tool calls, but those written with the change they record (the service desk's). */
export function toolCallRecords(
  calls: readonly ExecutedToolCall[],
  ids: IdGenerator,
  of: { conversationId: string; turnId: string; startedAt: Date },
): ToolCallRecord[] {
  return calls
    .filter((executed) => !executed.persisted)
    .map((executed) => ({
      id: ids.next('tool'),
      turnId: of.turnId,
      conversationId: of.conversationId,
      round: executed.round,
      name: executed.call.name,
      arguments: executed.call.arguments,
      result: executed.outcome.result,
      status: executed.outcome.status,
      durationMs: Math.round(executed.durationMs),
      createdAt: of.startedAt,
    }));
}

/** A turn's record: what triggered it, what it did, how long each part took, how it ended. */
export function turnRecord(args: {
  turnId: string;
  conversation: Conversation;
  input: TurnInput;
  prepared: PreparedTurn;
  result: ToolLoopResult | undefined;
  error: unknown;
  status: TurnRecord['status'];
  latency: Pick<TurnRecord, 'firstTokenMs' | 'timeToStatusMs'>;
  startedAt: Date;
  finishedAt: Date;
  totalMs: number;
  traceId: string | null;
  attempt: number;
}): TurnRecord {
  const { result } = args;
  return {
    id: args.turnId,
    conversationId: args.conversation.id,
    inboxId: args.input.kind === 'message' ? args.input.inboxId : null,
    trigger: args.input.kind === 'message' ? 'message' : args.input.trigger,
    module: args.prepared.module,
    status: args.status,
    modelCalls: result?.modelCalls ?? 0,
    toolRounds: result?.toolRounds ?? 0,
    modelMs: Math.round(result?.modelMs ?? 0),
    toolMs: Math.round(result?.toolMs ?? 0),
    totalMs: Math.round(args.totalMs),
    ...args.latency,
    error: args.error ? describeError(args.error) : null,
    startedAt: args.startedAt,
    finishedAt: args.finishedAt,
    traceId: args.traceId,
    attempts: args.attempt,
  };
}
