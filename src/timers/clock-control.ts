import type { Store } from '../store/store.ts';
import type { TimerWorker } from './timer-worker.ts';
import type { VirtualClock } from './virtual-clock.ts';

export interface ClockControlDeps {
  clock: VirtualClock;
  store: Store;
  worker: TimerWorker;
  /** Resolves when every effect of fired timers (turns, deliveries) has settled. */
  settle: () => Promise<void>;
}

/**
 * Moves the virtual clock to `target`, stopping at each timer's due time in order so every timer
 * fires at its own time (and sees the timers it arms), then waits for their effects. Each stop is
 * saved in the store, so a restarted server resumes from it.
 */
export async function advanceClock(deps: ClockControlDeps, target: Date): Promise<{ now: Date; fired: number }> {
  let fired = 0;
  for (;;) {
    const next = await deps.store.nextTimerDue();
    if (!next || next.getTime() > target.getTime()) break;
    deps.clock.set(next);
    // Kept before timers fire: a restart resumes here, never before what they wrote.
    await deps.store.saveVirtualClock(deps.clock.now());
    const count = await deps.worker.fireDue();
    fired += count;
    await deps.settle();
    if (count === 0 && next.getTime() <= deps.clock.now().getTime()) {
      // Nothing claimable at its own due time (a lease held elsewhere): stop rather than spin.
      break;
    }
  }
  deps.clock.set(target);
  await deps.store.saveVirtualClock(deps.clock.now());
  fired += await deps.worker.fireDue();
  await deps.settle();
  return { now: deps.clock.now(), fired };
}
