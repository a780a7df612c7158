import type { Store, StoreTx } from '../store/store.ts';
import type { TurnRecord } from '../core/domain.ts';

/** A firing that had nothing to do: its timer to mark done, with the record of its firing. */
export interface Completion {
  timerId: string;
  at: Date;
  record: () => TurnRecord;
}

interface Waiting extends Completion {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Most completions one transaction carries. */
const MAX_BATCH = 64;

/**
 * Marks done the timers whose firing had nothing to do (the participant paused, the reminder was
 * answered, a benchmark's empty handler), several lanes' in one transaction: group commit. The
 * first completion asked for while none is being written goes at once (a lone one never waits);
 * those asked for meanwhile go together in the next transaction. Each caller hears "done" only
 * once its completion is committed, so a conversation's next timer still fires after it. A batch
 * that fails is retried one completion per transaction, so one bad completion fails alone.
 */
export class TimerCompletions {
  readonly #store: Pick<Store, 'transaction'>;
  readonly #queue: Waiting[] = [];
  #writing = false;

  constructor(store: Pick<Store, 'transaction'>) {
    this.#store = store;
  }

  complete(completion: Completion): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ ...completion, resolve, reject });
      if (!this.#writing) void this.#write();
    });
  }

  async #write(): Promise<void> {
    this.#writing = true;
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_BATCH);
      try {
        await this.#store.transaction((tx) => completeAll(tx, batch));
        for (const item of batch) item.resolve();
      } catch {
        for (const item of batch)
          await this.#store.transaction((tx) => completeAll(tx, [item])).then(item.resolve, item.reject);
      }
    }
    this.#writing = false;
  }
}

/**
 * Each timer marked done, and its firing recorded when the mark took (a timer gone with its
 * conversation, or re-claimed by another process, has nothing to record against). The marks are
 * issued together, so PostgreSQL answers them in one round trip.
 */
async function completeAll(tx: StoreTx, batch: readonly Completion[]): Promise<void> {
  const marked = await Promise.all(batch.map((item) => tx.completeTimer(item.timerId, item.at)));
  for (const [index, item] of batch.entries()) if (marked[index]) await tx.insertTurn(item.record());
}
