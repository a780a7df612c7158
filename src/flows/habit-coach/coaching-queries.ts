import { sql, type Selectable } from 'kysely';
import type { Profile } from '../../core/profile.ts';
import type { Schedule } from '../../core/schedule.ts';
import { fromMs } from '../../store/codec.ts';
import { prepared } from '../../store/prepared.ts';
import { toProfile } from '../../store/profiles-queries.ts';
import { jsonArrayOf, jsonRowOf, jsonValue } from '../../store/json-rows.ts';
import type { QueryContext } from '../../store/query-context.ts';
import { toSchedule } from '../../store/schedules-queries.ts';
import type { ProfilesTable, SchedulesTable } from '../../store/schema.ts';

/** What a habit-coach turn starts from: the participant's profile, schedules and armed prompt timers. */
export interface CoachingState {
  profile: Profile | undefined;
  schedules: Schedule[];
  /** Due times of the participant's pending timers (of every kind), by dedup key. */
  pendingTimers: Map<string, Date>;
}

const PROFILE_COLUMNS = [
  'participant_id',
  'fields',
  'intensity',
  'success_count',
  'total_prompts',
  'tone',
  'field_updated_at',
  'last_habit_prompt',
  'last_prompt_sent_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof ProfilesTable>;
const SCHEDULE_COLUMNS = [
  'id',
  'ordinal',
  'participant_id',
  'kind',
  'fixed_time',
  'window_start',
  'window_end',
  'timezone',
  'prep_minutes',
  'created_at',
] as const satisfies ReadonlyArray<keyof SchedulesTable>;

const profileOf = (participantId: unknown) => sql`(select * from profiles where participant_id = ${participantId})`;

/**
 * The three in one statement (decision 020), rows as JSON in the shape of their tables, decoded
 * by the same mappers as the tables' own reads.
 */
const together = prepared((db, a: { participantId: string }, dialect) => ({
  compile: () =>
    sql<{ profile: unknown; schedules: unknown; timers: unknown }>`
      select
        ${jsonRowOf(dialect, profileOf(a.participantId), 'p', PROFILE_COLUMNS)}
          as profile,
        ${jsonArrayOf(
          dialect,
          sql`(select * from schedules where participant_id = ${a.participantId})`,
          's',
          SCHEDULE_COLUMNS,
          ['created_at', 'ordinal'],
        )} as schedules,
        ${jsonArrayOf(
          dialect,
          sql`(select dedup_key, due_at from timers where participant_id = ${a.participantId} and status = 'pending')`,
          't',
          ['dedup_key', 'due_at'],
          ['due_at'],
        )} as timers`.compile(db),
}));

/** The habit coach's turn reads: a store extension of its module (decision 019). */
export function coachingQueries(ctx: QueryContext) {
  return {
    async coachingState(participantId: string): Promise<CoachingState> {
      const row = (await together.first(ctx, { participantId }))!;
      const profile = jsonValue<Selectable<ProfilesTable> | null>(row.profile);
      const timers = jsonValue<{ dedup_key: string; due_at: number }[]>(row.timers);
      return {
        profile: profile ? toProfile(profile) : undefined,
        schedules: jsonValue<Selectable<SchedulesTable>[]>(row.schedules).map(toSchedule),
        pendingTimers: new Map(timers.map((timer) => [timer.dedup_key, fromMs(timer.due_at)])),
      };
    },
  };
}

export type CoachingQueries = ReturnType<typeof coachingQueries>;
