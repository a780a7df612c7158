import type { Clock } from '../core/clock.ts';

interface Sleeper {
  until: number;
  resolve: () => void;
}

/** A clock that stands still until it is moved: demos and black-box tests move days in milliseconds. */
export class VirtualClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(start: Date) {
    this.#now = start.getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = { until: this.#now + ms, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((other) => other !== sleeper);
          reject(signal.reason);
        },
        { once: true },
      );
      this.#wakeDue();
    });
  }

  /** Moves the clock to `to`; it never moves backwards. */
  set(to: Date): void {
    this.#now = Math.max(this.#now, to.getTime());
    this.#wakeDue();
  }

  #wakeDue(): void {
    const due = this.#sleepers.filter((sleeper) => sleeper.until <= this.#now);
    this.#sleepers = this.#sleepers.filter((sleeper) => sleeper.until > this.#now);
    for (const sleeper of due) sleeper.resolve();
  }
}

/**
 * Where a virtual clock starts: where the last run left it (kept in the store), or `CLOCK_START`
 * when that is later (the clock never goes back), else the current time on a first start.
 */
export function virtualClockStart(saved: Date | undefined, configured: Date | undefined, wallNow: Date): Date {
  if (saved && configured) return saved.getTime() >= configured.getTime() ? saved : configured;
  return saved ?? configured ?? wallNow;
}
