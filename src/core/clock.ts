/** Engine code never reads ambient time: it is handed a Clock. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** Ids are injected too, so tests can make them predictable. */
export interface IdGenerator {
  /** A new unique id with a readable prefix: `part_…`, `msg_…`. */
  next(prefix: string): string;
}

export const randomIds: IdGenerator = {
  next: (prefix) => `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`,
};

export function sequentialIds(): IdGenerator {
  let counter = 0;
  return { next: (prefix) => `${prefix}_${String(++counter).padStart(6, '0')}` };
}
