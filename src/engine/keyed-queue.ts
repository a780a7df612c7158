/**
 * Runs tasks one at a time per key, in the order they were added; different keys run
 * concurrently. A failing task does not stop the tasks queued behind it.
 */
export class KeyedQueue {
  #tails = new Map<string, Promise<void>>();
  /** Tasks queued or running, per key. */
  #counts = new Map<string, number>();
  #pending = 0;
  #idleWaiters: Array<{ ignore: (key: string) => boolean; resolve: () => void }> = [];

  /** Queues `task` behind every task already queued for `key`; resolves with its result. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    this.#pending += 1;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
      this.#pending -= 1;
      const left = this.#counts.get(key)! - 1;
      if (left === 0) this.#counts.delete(key);
      else this.#counts.set(key, left);
      this.recheck();
    });
    return result;
  }

  /** How many tasks are queued or running, across all keys. */
  get size(): number {
    return this.#pending;
  }

  /**
   * Resolves when no task is queued or running, but under keys `ignore` names (default none).
   * `recheck()` when what `ignore` answers may have changed.
   */
  idle(ignore: (key: string) => boolean = () => false): Promise<void> {
    if (this.#quiet(ignore)) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push({ ignore, resolve }));
  }

  /** Settles the `idle()` waiters whose condition now holds. */
  recheck(): void {
    if (this.#idleWaiters.length === 0) return;
    const waiting = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const waiter of waiting) {
      if (this.#quiet(waiter.ignore)) waiter.resolve();
      else this.#idleWaiters.push(waiter);
    }
  }

  #quiet(ignore: (key: string) => boolean): boolean {
    if (this.#pending === 0) return true;
    for (const key of this.#counts.keys()) if (!ignore(key)) return false;
    return true;
  }
}
