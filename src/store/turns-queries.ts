import type { Insertable, Selectable } from 'kysely';
import type { ToolCallRecord, ToolCallStatus, TurnRecord, TurnStatus } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import { preparedInsert } from './prepared.ts';
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

/** Durations may be fractional (performance.now()); they are stored as whole milliseconds. */
export function turnQueries(ctx: QueryContext): TurnOperations {
  const { db } = ctx;
  return {
    async insertTurn(turn, calls = []) {
      await insertTurnRow(ctx, [{ ...toTurnRow(turn), tool_calls: packCalls(turn, calls) }]);
    },

    /** The last `limit` turns, oldest first (all of them without a limit). */
    async listTurns(conversationId, options = {}) {
      let query = db
        .selectFrom('turns')
        .select(TURN_COLUMNS)
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
      const { turnIds } = options;
      if (turnIds?.length === 0) return [];
      let rows = db.selectFrom('tool_calls').selectAll().where('conversation_id', '=', conversationId);
      if (turnIds) rows = rows.where('turn_id', 'in', turnIds);
      const turns = db.selectFrom('turns').select(['id', 'conversation_id', 'started_at', 'tool_calls']);
      // Listed turns by id alone, so that the unique index finds them: with the conversation in the
      // filter SQLite reads its every turn instead. Another conversation's turn is dropped below.
      const own = await rows.orderBy('created_at').orderBy('round').orderBy('ordinal').execute();
      const recorded = await (
        turnIds ? turns.where('id', 'in', turnIds) : turns.where('conversation_id', '=', conversationId)
      )
        .orderBy('started_at')
        .orderBy('ordinal')
        .execute();
      const ownTurns = recorded.filter((turn) => turn.conversation_id === conversationId);
      return inExecutionOrder(conversationId, own.map(toToolCall), ownTurns);
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

/** A tool call as its turn's row keeps it: the `tool_calls` columns but the turn's and conversation's ids. */
type StoredCall = Omit<Insertable<ToolCallsTable>, 'turn_id' | 'conversation_id' | 'ordinal'>;

/** The calls as the turn's `tool_calls` value (null for none); each must be a call of `turn`. */
function packCalls(turn: TurnRecord, calls: readonly ToolCallRecord[]): string | null {
  if (calls.length === 0) return null;
  const stored = calls.map((call): StoredCall => {
    if (call.turnId !== turn.id || call.conversationId !== turn.conversationId)
      throw new Error(`insertTurn: tool call ${call.id} is not a call of turn ${turn.id}`);
    const { turn_id: _turn, conversation_id: _conversation, ...own } = toToolCallRow(call);
    return own;
  });
  return JSON.stringify(stored);
}

type RecordedTurn = { id: string; started_at: number | string; tool_calls: string | null };

/**
 * Calls turn by turn, in the order the turns started (then were recorded), and by round within a
 * turn: several turns may start at the same instant (a virtual clock, a busy millisecond). A call
 * committed on its own (`calls`) comes before its turn's recorded ones of the same round, as it
 * was committed first. A turn with no record (running, or crashed after such a call) is placed by
 * its first call's time, after the recorded turns that started then.
 */
function inExecutionOrder(conversationId: string, calls: ToolCallRecord[], recorded: RecordedTurn[]) {
  const groups = new Map<string, { at: number; rank: number; calls: ToolCallRecord[] }>();
  recorded.forEach((turn, rank) => groups.set(turn.id, { at: Number(turn.started_at), rank, calls: [] }));
  for (const call of calls) {
    let group = groups.get(call.turnId);
    if (!group) groups.set(call.turnId, (group = { at: call.createdAt.getTime(), rank: recorded.length, calls: [] }));
    group.calls.push(call);
  }
  for (const turn of recorded)
    if (turn.tool_calls !== null)
      groups.get(turn.id)!.calls.push(...unpackCalls(turn.id, conversationId, turn.tool_calls));
  return [...groups.values()]
    .sort((a, b) => a.at - b.at || a.rank - b.rank)
    .flatMap((group) => group.calls.sort((a, b) => a.round - b.round));
}

function unpackCalls(turnId: string, conversationId: string, text: string): ToolCallRecord[] {
  return (JSON.parse(text) as StoredCall[]).map((call) =>
    toToolCall({ ...call, turn_id: turnId, conversation_id: conversationId } as Selectable<ToolCallsTable>),
  );
}

function toTurn(row: Omit<Selectable<TurnsTable>, 'ordinal' | 'tool_calls'>): TurnRecord {
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

function toToolCall(row: Omit<Selectable<ToolCallsTable>, 'ordinal'>): ToolCallRecord {
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
