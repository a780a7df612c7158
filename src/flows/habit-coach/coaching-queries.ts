import { sql, type Selectable } from 'kysely';
import type { Profile } from '../../core/profile.ts';
import type { Schedule } from '../../core/schedule.ts';
import { fromMs } from '../../store/codec.ts';
import { prepared } from '../../store/prepared.ts';
import { PROFILE_COLUMNS, toProfile } from '../../store/profiles-queries.ts';
import { jsonArrayOf, jsonRowOf, jsonValue } from '../../store/json-rows.ts';
import type { QueryContext, SqlDialect } from '../../store/query-context.ts';
import { toSchedule } from '../../store/schedules-queries.ts';
import type { ProfilesTable, SchedulesTable } from '../../store/schema.ts';

/** What a habit-coach turn starts from: the participant's profile, schedules and armed prompt timers. */
export interface CoachingState {
  profile: Profile | undefined;
  schedules: Schedule[];
  /** Due times of the participant's pending timers (of every kind), by dedup key. */
  pendingTimers: Map<string, Date>;
}

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
 * The three as columns of one statement (decision 020), rows as JSON in the shape of their
 * tables, decoded by the same mappers as the tables' own reads. Read with the turn's context
 * (`Flow.contextRead`), or on their own.
 */
export function coachingColumns(dialect: SqlDialect, participantId: unknown) {
  return {
    profile: jsonRowOf(dialect, profileOf(participantId), 'p', PROFILE_COLUMNS),
    schedules: jsonArrayOf(
      dialect,
      sql`(select * from schedules where participant_id = ${participantId})`,
      's',
      SCHEDULE_COLUMNS,
      ['created_at', 'ordinal'],
    ),
    timers: jsonArrayOf(
      dialect,
      sql`(select dedup_key, due_at from timers where participant_id = ${participantId} and status = 'pending')`,
      't',
      ['dedup_key', 'due_at'],
      ['due_at'],
    ),
  };
}

/** The coaching state from the values of `coachingColumns`. */
export function coachingStateOf(columns: Record<string, unknown>): CoachingState {
  const profile = jsonValue<Selectable<ProfilesTable> | null>(columns.profile ?? null);
  const timers = jsonValue<{ dedup_key: string; due_at: number }[]>(columns.timers ?? []);
  return {
    profile: profile ? toProfile(profile) : undefined,
    schedules: jsonValue<Selectable<SchedulesTable>[]>(columns.schedules ?? []).map(toSchedule),
    pendingTimers: new Map(timers.map((timer) => [timer.dedup_key, fromMs(timer.due_at)])),
  };
}

const together = prepared((db, a: { participantId: string }, dialect) => ({
  compile: () => {
    const columns = Object.entries(coachingColumns(dialect, a.participantId));
    return sql<
      Record<string, unknown>
    >`select ${sql.join(columns.map(([name, column]) => sql`${column} as ${sql.ref(name)}`))}`.compile(db);
  },
}));

/** The habit coach's turn reads: a store extension of its module (decision 019). */
export function coachingQueries(ctx: QueryContext) {
  return {
    async coachingState(participantId: string): Promise<CoachingState> {
      return coachingStateOf((await together.first(ctx, { participantId }))!);
    },
  };
}

export type CoachingQueries = ReturnType<typeof coachingQueries>;
