import { fromMsOrNull, toMs } from './codec.ts';
import type { QueryContext } from './query-context.ts';
import type { StoreOperations } from './store.ts';

type BacklogOperations = Pick<StoreOperations, 'backlog'>;

/** What is waiting, for `/health`: three small aggregate queries over partial indexes' columns. */
export function backlogQueries({ db }: QueryContext): BacklogOperations {
  return {
    async backlog(now) {
      const [inbox, outbox, timers] = await Promise.all([
        db
          .selectFrom('inbox')
          .where('status', '=', 'pending')
          .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('received_at').as('oldest')])
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('outbox')
          .where('status', '=', 'pending')
          .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('timers')
          .where('status', '=', 'pending')
          .where('due_at', '<=', toMs(now))
          .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('due_at').as('oldest')])
          .executeTakeFirstOrThrow(),
      ]);
      return {
        inboxPending: Number(inbox.n),
        oldestInboxAt: fromMsOrNull(inbox.oldest as number | null),
        outboxPending: Number(outbox.n),
        oldestOutboxAt: fromMsOrNull(outbox.oldest as number | null),
        timersOverdue: Number(timers.n),
        oldestOverdueTimerAt: fromMsOrNull(timers.oldest as number | null),
      };
    },
  };
}
