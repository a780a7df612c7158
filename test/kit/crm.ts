import { demoCrmQueries, type DemoCrm } from '../../src/flows/service-desk/demo-crm-queries.ts';
import type { Store } from '../../src/store/store.ts';

/** The service desk's demo CRM on a store, as its module binds it (a store extension). */
export function crmOf(store: Store): DemoCrm {
  return store.extend(demoCrmQueries).ops;
}
