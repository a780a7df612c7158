import type { Logger } from 'pino';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Store } from '../store/store.ts';

/**
 * The database server's time, as the local clock plus a measured offset, so that processes on
 * machines with skewed clocks agree on what is due and when a lease expires (decision 004).
 * The offset is measured at start and refreshed every `refreshMs`.
 */
export async function databaseClock(
  store: Store,
  logger: Logger,
  refreshMs = 60_000,
): Promise<Clock & { stop(): void; offsetMs(): number }> {
  let offset = 0;
  const measure = async () => {
    const before = Date.now();
    const server = (await store.databaseNow()).getTime();
    const after = Date.now();
    offset = server - (before + after) / 2;
  };
  await measure();
  if (Math.abs(offset) > 1000)
    logger.warn(
      { offsetMs: Math.round(offset) },
      "this machine's clock differs from the database's; using the database's",
    );
  const timer = setInterval(
    () => void measure().catch((error: unknown) => logger.warn({ err: error }, 'database clock not refreshed')),
    refreshMs,
  );
  timer.unref();
  return {
    now: () => new Date(Date.now() + offset),
    sleep: systemClock.sleep,
    stop: () => clearInterval(timer),
    offsetMs: () => offset,
  };
}
