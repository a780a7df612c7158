import { isStoreUnavailable } from '../core/errors.ts';
import type { Store } from '../store/store.ts';

/** How long `/health` waits for the store before it says the store is down (default). */
export const HEALTH_TIMEOUT_MS = 2000;

export type StoreHealth = { ok: true } | { ok: false; problem: string };

/**
 * The store's health for `/health`, within `timeoutMs` whatever the database does: a ping that
 * has not answered by then (a hung connection, a full pool) counts as down, and so does a store
 * whose last write failed for lack of space and still cannot write (the ping checks that).
 */
export async function checkStore(store: Pick<Store, 'ping'>, timeoutMs = HEALTH_TIMEOUT_MS): Promise<StoreHealth> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<StoreHealth>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, problem: `the database did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  const ping = store.ping().then(
    (): StoreHealth => ({ ok: true }),
    // /health answers without a token: the driver's message (hosts, ports) stays out of it.
    (error: unknown): StoreHealth => ({
      ok: false,
      problem: isStoreUnavailable(error) ? (error as Error).message : 'the database cannot be reached right now',
    }),
  );
  try {
    return await Promise.race([ping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
