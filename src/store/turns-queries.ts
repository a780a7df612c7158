import type { Insertable, Selectable } from 'kysely';
import type { ToolCallRecord, ToolCallStatus, TurnRecord, TurnStatus } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import { prepared, PreparedFamily, preparedInsert } from './prepared.ts';
import type { ToolCallsTable, TurnsTable } from './schema.ts';
import { fromMs, oneOf, toMs } from './codec.ts';

type TurnOperations = Pick<StoreOperations, 'insertTurn' | 'listTurns' | 'insertToolCalls' | 'listToolCalls'>;

const TURN_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly TurnStatus[];
const CALL_STATUSES = ['ok', 'error'] as const satisfies readonly ToolCallStatus[];

const insertTurnRow = preparedInsert('turns');
const insertToolCallRows = preparedInsert('tool_calls');

const TURN_COLUMNS = [
  'id',
  'conversation_id',
  'inbox_id',
  'trigger',
  'module',
  'status',
  'model_calls',
  'tool_rounds',
  'model_ms',
  'tool_ms',
  'total_ms',
  'first_token_ms',
  'time_to_status_ms',
  'error',
  'started_at',
  'finished_at',
  'trace_id',
  'attempts',
] as const satisfies readonly (keyof Insertable<TurnsTable>)[];
const CALL_COLUMNS = [
  'id',
  'turn_id',
  'conversation_id',
  'round',
  'name',
  'arguments',
  'result',
  'status',
  'duration_ms',
  'created_at',
] as const satisfies readonly (keyof Insertable<ToolCallsTable>)[];
/** PostgreSQL: a turn and its tool calls in one statement, prepared once per number of calls. */
const turnWithCalls = new PreparedFamily((count: number) =>
  prepared((db, a: Record<string, unknown>) =>
    db
      .with('turn', (qb) =>
        qb
          .insertInto('turns')
          .values(Object.fromEntries(TURN_COLUMNS.map((column) => [column, a[`turn:${column}`]])) as never)
          .returning('id'),
      )
      .insertInto('tool_calls')
      .values(
        Array.from({ length: count }, (_, index) =>
          Object.fromEntries(CALL_COLUMNS.map((column) => [column, a[`${index}:${column}`]])),
        ) as never,
      ),
  ),
);

/** Durations may be fractional (performance.now()); they are stored as whole milliseconds. */
export function turnQueries(ctx: QueryContext): TurnOperations {
  const { db } = ctx;
  return {
    async insertTurn(turn, calls = []) {
      const turnRow = toTurnRow(turn);
      const callRows = calls.map(toToolCallRow);
      if (ctx.dialect === 'postgres' && callRows.length > 0) {
        // One round trip for both (decision 020): the turn in a data-modifying CTE.
        const args: Record<string, unknown> = {};
        for (const [column, value] of Object.entries(turnRow)) args[`turn:${column}`] = value;
        callRows.forEach((row, index) => {
          for (const [column, value] of Object.entries(row)) args[`${index}:${column}`] = value;
        });
        await turnWithCalls.of(callRows.length).write(ctx, args);
        return;
      }
      await insertTurnRow(ctx, [turnRow]);
      await insertToolCallRows(ctx, callRows);
    },

    /** The last `limit` turns, oldest first (all of them without a limit). */
    async listTurns(conversationId, options = {}) {
      let query = db
        .selectFrom('turns')
        .selectAll()
        .where('conversation_id', '=', conversationId)
        .orderBy('started_at', 'desc')
        .orderBy('ordinal', 'desc');
      if (options.limit !== undefined) query = query.limit(Math.max(0, options.limit));
      return (await query.execute()).reverse().map(toTurn);
    },

    async insertToolCalls(calls) {
      await insertToolCallRows(ctx, calls.map(toToolCallRow));
    },

    async listToolCalls(conversationId, options = {}) {
      let query = db.selectFrom('tool_calls').selectAll().where('conversation_id', '=', conversationId);
      if (options.turnId !== undefined) query = query.where('turn_id', '=', options.turnId);
      const rows = await query.orderBy('created_at').orderBy('round').orderBy('ordinal').execute();
      return rows.map(toToolCall);
    },
  };
}

function toTurnRow(turn: TurnRecord): Insertable<TurnsTable> {
  return {
    id: turn.id,
    conversation_id: turn.conversationId,
    inbox_id: turn.inboxId,
    trigger: turn.trigger,
    module: turn.module,
    status: turn.status,
    model_calls: turn.modelCalls,
    tool_rounds: turn.toolRounds,
    model_ms: Math.round(turn.modelMs),
    tool_ms: Math.round(turn.toolMs),
    total_ms: Math.round(turn.totalMs),
    first_token_ms: turn.firstTokenMs === null ? null : Math.round(turn.firstTokenMs),
    time_to_status_ms: turn.timeToStatusMs === null ? null : Math.round(turn.timeToStatusMs),
    error: turn.error,
    started_at: toMs(turn.startedAt),
    finished_at: toMs(turn.finishedAt),
    trace_id: turn.traceId ?? null,
    attempts: turn.attempts,
  };
}

function toToolCallRow(call: ToolCallRecord): Insertable<ToolCallsTable> {
  return {
    id: call.id,
    turn_id: call.turnId,
    conversation_id: call.conversationId,
    round: call.round,
    name: call.name,
    arguments: call.arguments,
    result: call.result,
    status: call.status,
    duration_ms: Math.round(call.durationMs),
    created_at: toMs(call.createdAt),
  };
}

function toTurn(row: Selectable<TurnsTable>): TurnRecord {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    inboxId: row.inbox_id,
    trigger: row.trigger,
    module: row.module,
    status: oneOf(TURN_STATUSES, row.status, 'turn status'),
    modelCalls: Number(row.model_calls),
    toolRounds: Number(row.tool_rounds),
    modelMs: Number(row.model_ms),
    toolMs: Number(row.tool_ms),
    totalMs: Number(row.total_ms),
    firstTokenMs: row.first_token_ms === null ? null : Number(row.first_token_ms),
    timeToStatusMs: row.time_to_status_ms === null ? null : Number(row.time_to_status_ms),
    error: row.error,
    startedAt: fromMs(row.started_at),
    finishedAt: fromMs(row.finished_at),
    traceId: row.trace_id,
    attempts: Number(row.attempts),
  };
}

function toToolCall(row: Selectable<ToolCallsTable>): ToolCallRecord {
  return {
    id: row.id,
    turnId: row.turn_id,
    conversationId: row.conversation_id,
    round: Number(row.round),
    name: row.name,
    arguments: row.arguments,
    result: row.result,
    status: oneOf(CALL_STATUSES, row.status, 'tool call status'),
    durationMs: Number(row.duration_ms),
    createdAt: fromMs(row.created_at),
  };
}
