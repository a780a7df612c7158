import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import type { Engine } from '../../engine/engine.ts';
import { parseRequest } from '../http-errors.ts';
import { jsonSchema } from '../participant-schemas.ts';
import { resource } from '../resource.ts';
import { describeGoSchedule, goDuration } from './go-schedule.ts';
import { timerParams } from './go-schemas.ts';
import { tags } from './platform-deps.ts';
import type { ActiveTimer, PlatformQueries } from './platform-queries.ts';
import { GO_SCHEDULE, goScheduleKey, goSchedulePayload } from './schedule-timer.ts';

interface TimerDeps {
  engine: Pick<Engine, 'exclusive'>;
  clock: Clock;
  queries: PlatformQueries;
}

/**
 * Go's `TimerInfo`. A `POST /schedule` series is one recurring timer under its schedule id, its
 * next send as `next_run`; every other timer (the habit coach's prompts, reminders, nudges) is
 * one firing, `expires_at` its due time.
 */
export function timerInfo(timer: ActiveTimer, now: Date) {
  const remaining = goDuration(timer.dueAt.getTime() - now.getTime());
  const series = timer.kind === GO_SCHEDULE.kind ? goSchedulePayload.safeParse(timer.payload) : undefined;
  if (series?.success) {
    const { scheduleId, createdAt, schedule, zone } = series.data;
    return {
      id: scheduleId,
      type: 'recurring',
      scheduled_at: createdAt,
      schedule: { ...schedule, timezone: zone },
      next_run: timer.dueAt.toISOString(),
      remaining,
      description: `Recurring timer with schedule ${describeGoSchedule(schedule)}`,
    };
  }
  return {
    id: timer.id,
    type: 'once',
    scheduled_at: timer.createdAt.toISOString(),
    expires_at: timer.dueAt.toISOString(),
    remaining,
    description: `${timer.kind} timer${timer.participantId ? ` of participant ${timer.participantId}` : ''}`,
  };
}

/** Go's timer routes answer without the envelope, as Go's did. */
export function timerRoutes(app: FastifyInstance, deps: TimerDeps): void {
  const find = async (params: unknown) => {
    const { id } = parseRequest(timerParams, params, 'params');
    const timer = await deps.queries.activeTimer(id, goScheduleKey(id));
    if (!timer) throw new AppError('not_found', `Timer not found: timer with ID ${id} not found`, { field: 'id' });
    return { id, timer };
  };
  resource(app, '/timers', {
    GET: {
      schema: { tags, summary: 'Go PromptPipe: every timer still to fire, soonest first, and how many' },
      handler: async () => {
        const now = deps.clock.now();
        const timers = (await deps.queries.activeTimers()).map((timer) => timerInfo(timer, now));
        return { timers, count: timers.length };
      },
    },
  });
  resource(app, '/timers/:id', {
    GET: {
      schema: { tags, summary: 'Go PromptPipe: one timer', params: jsonSchema(timerParams) },
      handler: async (request) => timerInfo((await find(request.params)).timer, deps.clock.now()),
    },
    DELETE: {
      schema: {
        tags,
        summary:
          "Go PromptPipe: cancel a POST /schedule series (a flow's own timers follow the participant's schedules)",
        params: jsonSchema(timerParams),
      },
      handler: async (request) => {
        const { id, timer } = await find(request.params);
        if (timer.kind !== GO_SCHEDULE.kind)
          throw new AppError(
            'conflict',
            `timer ${id} (${timer.kind}) belongs to its conversation's flow: only POST /schedule series are ` +
              "cancelled here; change the participant's schedule or status instead",
            { field: 'id' },
          );
        // In the conversation's turn queue, where the series fires: a firing under way ends first
        // (its send goes out) and the row it armed is cancelled; a row claimed but not yet fired
        // is cancelled with the pending one, and its handler then does nothing.
        await deps.engine.exclusive(timer.conversationId, () =>
          deps.queries.cancelSeries(timer.dedupKey, deps.clock.now()),
        );
        return { message: 'Timer cancelled successfully', timerID: id, canceled: true };
      },
    },
  });
}
