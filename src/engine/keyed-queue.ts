/**
 * Runs tasks one at a time per key, in the order they were added; different keys run
 * concurrently. A failing task does not stop the tasks queued behind it.
 */
export class KeyedQueue {
  #tails = new Map<string, Promise<void>>();
  #pending = 0;
  #idleWaiters: Array<() => void> = [];

  /** Queues `task` behind every task already queued for `key`; resolves with its result. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    this.#pending += 1;
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
      this.#pending -= 1;
      if (this.#pending === 0) this.#notifyIdle();
    });
    return result;
  }

  /** How many tasks are queued or running, across all keys. */
  get size(): number {
    return this.#pending;
  }

  /** Resolves when no task is queued or running. */
  idle(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #notifyIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
