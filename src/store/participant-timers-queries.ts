import type { Timer } from '../core/timer.ts';
import type { QueryContext } from './query-context.ts';
import { toTimer } from './timers-queries.ts';

/**
 * What is still to fire for a participant (a store extension): their own timers (the flow's
 * prompts, reminders, nudges) and those of their conversation that belong to no participant (a
 * `POST /schedule` series, which outlives a pause), by due time.
 */
export function participantTimerQueries({ db }: QueryContext) {
  return {
    async pendingTimersOf(participantId: string, conversationId: string): Promise<Timer[]> {
      const rows = await db
        .selectFrom('timers')
        .selectAll()
        .where('status', '=', 'pending')
        .where((eb) =>
          eb.or([
            eb('participant_id', '=', participantId),
            eb.and([eb('conversation_id', '=', conversationId), eb('participant_id', 'is', null)]),
          ]),
        )
        .orderBy('due_at')
        .orderBy('ordinal')
        .execute();
      return rows.map(toTimer);
    },
  };
}
