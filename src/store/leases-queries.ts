import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import { toMs } from './codec.ts';

type LeaseOperations = Pick<
  StoreOperations,
  'acquireLease' | 'renewLease' | 'releaseLease' | 'clearLeases' | 'getFlowState' | 'saveFlowState'
>;

export function leaseQueries({ db }: QueryContext): LeaseOperations {
  return {
    async acquireLease(conversationId, owner, now, until) {
      // One statement: insert, or take over a row that expired or is already ours.
      const row = await db
        .insertInto('conversation_leases')
        .values({ conversation_id: conversationId, owner, lease_until: toMs(until) })
        .onConflict((oc) =>
          oc
            .column('conversation_id')
            .doUpdateSet((eb) => ({ owner: eb.ref('excluded.owner'), lease_until: eb.ref('excluded.lease_until') }))
            .where((eb) =>
              eb.or([
                eb('conversation_leases.owner', '=', owner),
                eb('conversation_leases.lease_until', '<=', toMs(now)),
              ]),
            ),
        )
        .returning('owner')
        .executeTakeFirst();
      return row?.owner === owner;
    },

    async renewLease(conversationId, owner, until) {
      const result = await db
        .updateTable('conversation_leases')
        .set({ lease_until: toMs(until) })
        .where('conversation_id', '=', conversationId)
        .where('owner', '=', owner)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async releaseLease(conversationId, owner) {
      await db
        .deleteFrom('conversation_leases')
        .where('conversation_id', '=', conversationId)
        .where('owner', '=', owner)
        .execute();
    },

    async getFlowState(conversationId) {
      const row = await db
        .selectFrom('flow_states')
        .select('data')
        .where('conversation_id', '=', conversationId)
        .executeTakeFirst();
      return row ? (JSON.parse(row.data) as unknown) : undefined;
    },

    async saveFlowState(conversationId, data, now) {
      const text = JSON.stringify(data);
      await db
        .insertInto('flow_states')
        .values({ conversation_id: conversationId, data: text, updated_at: toMs(now) })
        .onConflict((oc) => oc.column('conversation_id').doUpdateSet({ data: text, updated_at: toMs(now) }))
        .execute();
    },

    async clearLeases() {
      const result = await db.deleteFrom('conversation_leases').executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
