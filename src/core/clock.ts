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

/**
 * `<prefix>_` and 32 hex digits: the time in ms (12 digits), then 80 random bits (from a v4 UUID,
 * its fixed version and variant digits left out). Ids made later sort later, so a table's index on
 * its ids grows at one end, as its rows do: a commit writes that end's page once, where random ids
 * put each new row on a page of its own (decision 020).
 */
export const randomIds: IdGenerator = {
  next: (prefix) => {
    const random = crypto.randomUUID();
    const time = Date.now().toString(16).padStart(12, '0');
    return `${prefix}_${time}${random.slice(0, 8)}${random.slice(9, 13)}${random.slice(15, 18)}${random.slice(20, 23)}${random.slice(24, 26)}`;
  },
};

export function sequentialIds(): IdGenerator {
  let counter = 0;
  return { next: (prefix) => `${prefix}_${String(++counter).padStart(6, '0')}` };
}
