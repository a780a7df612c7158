import { sql, type Selectable } from 'kysely';
import type { Timer, TimerStatus } from '../core/timer.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { TimersTable } from './schema.ts';
import { fromMs, fromMsOrNull, oneOf, toMs } from './codec.ts';
import { prepared, PreparedFamily } from './prepared.ts';

type TimerOperations = Pick<
  StoreOperations,
  | 'scheduleTimer'
  | 'cancelTimer'
  | 'cancelTimers'
  | 'listPendingTimers'
  | 'getTimer'
  | 'claimDueTimers'
  | 'nextTimerDue'
  | 'completeTimer'
  | 'extendTimerLease'
  | 'failTimer'
  | 'cancelTimersOf'
>;

const STATUSES = ['pending', 'running', 'done', 'failed', 'cancelled'] as const satisfies readonly TimerStatus[];

const cancelByKey = prepared((db, a: { dedupKey: string; at: number }) =>
  db
    .updateTable('timers')
    .set({ status: 'cancelled', updated_at: a.at })
    .where('dedup_key', '=', a.dedupKey)
    .where('status', '=', 'pending'),
);

const cancelByKeys = new PreparedFamily((count: number) =>
  prepared((db, a: Record<string, string | number>) => {
    const keys = Array.from({ length: count }, (_, index) => a[`k${index}`] as string);
    return db
      .updateTable('timers')
      .set({ status: 'cancelled', updated_at: a.at as number })
      .where('dedup_key', 'in', keys)
      .where('status', '=', 'pending');
  }),
);

/**
 * Serialises writers of one dedup key until the transaction ends (PostgreSQL). Without it two
 * concurrent replacements could both cancel the old row and then collide on the partial unique
 * index. SQLite transactions are already serial.
 */
async function lockKey(ctx: QueryContext, dedupKey: string): Promise<void> {
  if (ctx.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${dedupKey}))`.execute(ctx.db);
}

export function timerQueries(ctx: QueryContext): TimerOperations {
  const { db } = ctx;
  return {
    async scheduleTimer(timer) {
      await ctx.atomic(async (tx) => {
        await lockKey(tx, timer.dedupKey);
        const createdAt = toMs(timer.createdAt);
        await tx.db
          .updateTable('timers')
          .set({ status: 'cancelled', updated_at: createdAt })
          .where('dedup_key', '=', timer.dedupKey)
          .where('status', '=', 'pending')
          .execute();
        await tx.db
          .insertInto('timers')
          .values({
            id: timer.id,
            kind: timer.kind,
            conversation_id: timer.conversationId,
            participant_id: timer.participantId,
            dedup_key: timer.dedupKey,
            due_at: toMs(timer.dueAt),
            payload: JSON.stringify(timer.payload ?? null),
            status: 'pending',
            attempts: 0,
            lease_until: null,
            last_error: null,
            created_at: createdAt,
            updated_at: createdAt,
          })
          .execute();
      });
    },

    async cancelTimer(dedupKey, at) {
      return (await cancelByKey.changed(ctx, { dedupKey, at: toMs(at) })) > 0;
    },

    async cancelTimers(dedupKeys, at) {
      if (dedupKeys.length === 0) return 0;
      const args = Object.fromEntries(dedupKeys.map((key, index) => [`k${index}`, key]));
      return cancelByKeys.of(dedupKeys.length).changed(ctx, { ...args, at: toMs(at) });
    },

    async listPendingTimers(participantId) {
      const rows = await db
        .selectFrom('timers')
        .selectAll()
        .where('participant_id', '=', participantId)
        .where('status', '=', 'pending')
        .orderBy('due_at')
        .orderBy('ordinal')
        .execute();
      return rows.map(toTimer);
    },

    async getTimer(id) {
      const row = await db.selectFrom('timers').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toTimer(row);
    },

    async claimDueTimers(now, limit, leaseUntil) {
      if (limit <= 0) return [];
      const nowMs = toMs(now);
      return ctx.atomic(async (tx) => {
        let due = tx.db
          .selectFrom('timers')
          .select('id')
          .where((eb) =>
            eb.or([
              eb.and([eb('status', '=', 'pending'), eb('due_at', '<=', nowMs)]),
              eb.and([eb('status', '=', 'running'), eb('lease_until', '<=', nowMs)]),
            ]),
          )
          .orderBy('due_at')
          .orderBy('ordinal')
          .limit(limit);
        // Concurrent claimers skip each other's rows instead of waiting for them.
        if (tx.dialect === 'postgres') due = due.forUpdate().skipLocked();
        const ids = (await due.execute()).map((row) => row.id);
        if (ids.length === 0) return [];
        const rows = await tx.db
          .updateTable('timers')
          .set((eb) => ({
            status: 'running',
            lease_until: toMs(leaseUntil),
            attempts: eb('attempts', '+', 1),
            updated_at: nowMs,
          }))
          .where('id', 'in', ids)
          .returningAll()
          .execute();
        return rows
          .sort((a, b) => Number(a.due_at) - Number(b.due_at) || Number(a.ordinal) - Number(b.ordinal))
          .map(toTimer);
      });
    },

    async nextTimerDue() {
      const { pending, lease } = await db
        .selectNoFrom((eb) => [
          eb
            .selectFrom('timers')
            .select((e) => e.fn.min('due_at').as('m'))
            .where('status', '=', 'pending')
            .as('pending'),
          eb
            .selectFrom('timers')
            .select((e) => e.fn.min('lease_until').as('m'))
            .where('status', '=', 'running')
            .as('lease'),
        ])
        .executeTakeFirstOrThrow();
      const candidates = [pending, lease].filter((value) => value !== null && value !== undefined).map(Number);
      return candidates.length === 0 ? null : new Date(Math.min(...candidates));
    },

    async extendTimerLease(id, attempts, until) {
      const result = await db
        .updateTable('timers')
        .set({ lease_until: toMs(until) })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .where('attempts', '=', attempts)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async completeTimer(id, at) {
      const result = await db
        .updateTable('timers')
        .set({ status: 'done', lease_until: null, updated_at: toMs(at) })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async failTimer(id, error, retryAt) {
      await ctx.atomic(async (tx) => {
        const timer = await tx.db
          .selectFrom('timers')
          .select('dedup_key')
          .where('id', '=', id)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (!timer) return;
        let status: TimerStatus = retryAt ? 'pending' : 'failed';
        if (retryAt) {
          await lockKey(tx, timer.dedup_key);
          // A newer pending timer with the same key (armed while this one ran) replaces the retry.
          const newer = await tx.db
            .selectFrom('timers')
            .select('id')
            .where('dedup_key', '=', timer.dedup_key)
            .where('status', '=', 'pending')
            .executeTakeFirst();
          if (newer) status = 'cancelled';
        }
        await tx.db
          .updateTable('timers')
          .set({
            status,
            last_error: error,
            lease_until: null,
            // The port gives no time for a failure; updated_at keeps the claim time then.
            due_at: status === 'pending' && retryAt ? toMs(retryAt) : undefined,
          })
          .where('id', '=', id)
          .execute();
      });
    },

    async cancelTimersOf(participantId, at) {
      const result = await db
        .updateTable('timers')
        .set({ status: 'cancelled', updated_at: toMs(at) })
        .where('participant_id', '=', participantId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export function toTimer(row: Selectable<TimersTable>): Timer {
  let payload: unknown;
  try {
    payload = JSON.parse(row.payload);
  } catch (error) {
    throw new Error(`stored payload of timer ${row.id} is not valid JSON`, { cause: error });
  }
  return {
    id: row.id,
    kind: row.kind,
    conversationId: row.conversation_id,
    participantId: row.participant_id,
    dedupKey: row.dedup_key,
    dueAt: fromMs(row.due_at),
    payload,
    status: oneOf(STATUSES, row.status, 'timer status'),
    attempts: Number(row.attempts),
    leaseUntil: fromMsOrNull(row.lease_until),
    lastError: row.last_error,
    createdAt: fromMs(row.created_at),
  };
}
