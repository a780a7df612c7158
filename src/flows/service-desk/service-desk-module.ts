import type { FlowModule } from '../flow-module.ts';
import { demoCrmQueries } from './demo-crm-queries.ts';
import { createServiceDeskFlow, SERVICE_DESK_FLOW } from './service-desk-flow.ts';
import { offlineDeskStep } from './offline-policy.ts';
import { localDate } from '../../timers/schedule-math.ts';

/** Spec 004's service desk over the demo CRM (decision 005). */
export const serviceDeskModule: FlowModule = {
  id: SERVICE_DESK_FLOW,
  offlinePolicy: offlineDeskStep,
  load(config) {
    return {
      async start({ store, clock, ids }) {
        const crm = store.extend(demoCrmQueries);
        // The demo CRM's appointments are local dates in the business's zone (`DESK_TIME_ZONE`).
        const { locale, timeZone } = config.desk;
        await crm.ops.seedIfEmpty(localDate(clock.now(), timeZone));
        const flow = createServiceDeskFlow({
          crm: crm.ops,
          // The transaction's operations are read through their prototype: extended, not copied.
          transaction: (work) => crm.transaction((tx, crmTx) => work(Object.assign(Object.create(tx), { crm: crmTx }))),
          ids,
          interpreterModel: config.llm.interpreterModel,
          timeZone,
          locale,
          phoneRegion: config.conversation.phoneRegion,
        });
        return { flow };
      },
    };
  },
};
