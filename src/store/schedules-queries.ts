import type { Selectable } from 'kysely';
import type { Schedule, ScheduleKind } from '../core/schedule.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { SchedulesTable } from './schema.ts';
import { fromMs, oneOf, toMs } from './codec.ts';
import { prepared } from './prepared.ts';

type ScheduleOperations = Pick<
  StoreOperations,
  'listSchedules' | 'insertSchedule' | 'deleteSchedule' | 'setScheduleTimezone'
>;

const KINDS = ['fixed', 'random'] as const satisfies readonly ScheduleKind[];

const schedulesOf = prepared((db, a: { participantId: string }) =>
  db
    .selectFrom('schedules')
    .selectAll()
    .where('participant_id', '=', a.participantId)
    .orderBy('created_at')
    .orderBy('ordinal'),
);

export function scheduleQueries(ctx: QueryContext): ScheduleOperations {
  const { db } = ctx;
  return {
    async listSchedules(participantId) {
      const rows = await schedulesOf.rows(ctx, { participantId });
      return rows.map(toSchedule);
    },

    async insertSchedule(s) {
      await db
        .insertInto('schedules')
        .values({
          id: s.id,
          participant_id: s.participantId,
          kind: s.kind,
          fixed_time: s.fixedTime,
          window_start: s.windowStart,
          window_end: s.windowEnd,
          timezone: s.timezone,
          prep_minutes: s.prepMinutes,
          created_at: toMs(s.createdAt),
        })
        .execute();
    },

    async setScheduleTimezone(id, timezone) {
      await db.updateTable('schedules').set({ timezone }).where('id', '=', id).execute();
    },

    async deleteSchedule(id) {
      const result = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export function toSchedule(row: Selectable<SchedulesTable>): Schedule {
  return {
    id: row.id,
    participantId: row.participant_id,
    kind: oneOf(KINDS, row.kind, 'schedule kind'),
    fixedTime: row.fixed_time,
    windowStart: row.window_start,
    windowEnd: row.window_end,
    timezone: row.timezone,
    prepMinutes: Number(row.prep_minutes),
    createdAt: fromMs(row.created_at),
  };
}
