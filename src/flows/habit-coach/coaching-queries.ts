import { sql, type Selectable } from 'kysely';
import type { Profile } from '../../core/profile.ts';
import type { Schedule } from '../../core/schedule.ts';
import { fromMs } from '../../store/codec.ts';
import { prepared } from '../../store/prepared.ts';
import { profileOf, toProfile } from '../../store/profiles-queries.ts';
import type { QueryContext } from '../../store/query-context.ts';
import { schedulesOf, toSchedule } from '../../store/schedules-queries.ts';
import type { ProfilesTable, SchedulesTable } from '../../store/schema.ts';

/** What a habit-coach turn starts from: the participant's profile, schedules and armed prompt timers. */
export interface CoachingState {
  profile: Profile | undefined;
  schedules: Schedule[];
  /** Due times of the participant's pending timers (of every kind), by dedup key. */
  pendingTimers: Map<string, Date>;
}

/**
 * PostgreSQL: the three in one statement (one round trip instead of three; decision 020), rows
 * as JSON in the shape of their tables. SQLite: three statements, which cost microseconds there.
 */
const together = prepared((db, a: { participantId: string }) => ({
  compile: () =>
    sql<{
      profile: Selectable<ProfilesTable> | null;
      schedules: Selectable<SchedulesTable>[];
      timers: [string, number][];
    }>`
      select
        (select row_to_json(p) from profiles p where p.participant_id = ${a.participantId}) as profile,
        (select coalesce(json_agg(s order by s.created_at, s.ordinal), '[]'::json)
           from schedules s where s.participant_id = ${a.participantId}) as schedules,
        (select coalesce(json_agg(json_build_array(t.dedup_key, t.due_at)), '[]'::json)
           from timers t where t.participant_id = ${a.participantId} and t.status = 'pending') as timers`.compile(db),
}));
const pendingTimersOf = prepared((db, a: { participantId: string }) =>
  db
    .selectFrom('timers')
    .select(['dedup_key', 'due_at'])
    .where('participant_id', '=', a.participantId)
    .where('status', '=', 'pending'),
);

/** The habit coach's turn reads: a store extension of its module (decision 019). */
export function coachingQueries(ctx: QueryContext) {
  return {
    async coachingState(participantId: string): Promise<CoachingState> {
      const args = { participantId };
      if (ctx.dialect === 'postgres') {
        const row = (await together.first(ctx, args))!;
        return {
          profile: row.profile ? toProfile(row.profile) : undefined,
          schedules: row.schedules.map(toSchedule),
          pendingTimers: new Map(row.timers.map(([key, dueAt]) => [key, fromMs(dueAt)])),
        };
      }
      const profile = await profileOf.first(ctx, args);
      const schedules = (await schedulesOf.rows(ctx, args)).map(toSchedule);
      const timers = await pendingTimersOf.rows(ctx, args);
      return {
        profile: profile && toProfile(profile),
        schedules,
        pendingTimers: new Map(timers.map((timer) => [timer.dedup_key, fromMs(timer.due_at)])),
      };
    },
  };
}

export type CoachingQueries = ReturnType<typeof coachingQueries>;
