import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import { fromMs, toMs } from './codec.ts';

type VirtualClockOperations = Pick<StoreOperations, 'getVirtualClock' | 'saveVirtualClock'>;

/** The one row of the virtual clock. */
const ROW_ID = 'server';

export function virtualClockQueries({ db }: QueryContext): VirtualClockOperations {
  return {
    async getVirtualClock() {
      const row = await db.selectFrom('virtual_clock').select('at').where('id', '=', ROW_ID).executeTakeFirst();
      return row && fromMs(row.at);
    },

    async saveVirtualClock(at) {
      // The clock never goes back, not even through a late write from an earlier move.
      await db
        .insertInto('virtual_clock')
        .values({ id: ROW_ID, at: toMs(at) })
        .onConflict((oc) =>
          oc
            .column('id')
            .doUpdateSet((eb) => ({ at: eb.ref('excluded.at') }))
            .where((eb) => eb('virtual_clock.at', '<', eb.ref('excluded.at'))),
        )
        .execute();
    },
  };
}
