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
      // Two index searches, not an OR: with one, SQLite read every pending timer of the study in
      // due order (`timers_due`) to pick this participant's.
      const rows = await db
        .selectFrom('timers')
        .selectAll()
        .where('participant_id', '=', participantId)
        .where('status', '=', 'pending')
        .unionAll((eb) =>
          eb
            .selectFrom('timers')
            .selectAll()
            .where('conversation_id', '=', conversationId)
            .where('participant_id', 'is', null)
            .where('status', '=', 'pending'),
        )
        .orderBy('due_at')
        .orderBy('ordinal')
        .execute();
      return rows.map(toTimer);
    },
  };
}
