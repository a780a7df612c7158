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
 * `<prefix>_` and 32 hex digits: the time in ms (12 digits), then 80 random bits. Ids made later
 * sort later, so a table's index on its ids grows at one end, as its rows do: a commit writes that
 * end's page once, where random ids put each new row on a page of its own (decision 020).
 */
export function timeOrderedIds(): IdGenerator {
  // Random bytes drawn in batches (one call per 400 ids); the millisecond's digits made once.
  const entropy = Buffer.alloc(4000);
  let drawn = entropy.length;
  let clock = { ms: -1, hex: '' };
  return {
    next: (prefix) => {
      if (drawn + 10 > entropy.length) {
        crypto.getRandomValues(entropy);
        drawn = 0;
      }
      const ms = Date.now();
      if (ms !== clock.ms) clock = { ms, hex: ms.toString(16).padStart(12, '0') };
      const random = entropy.toString('hex', drawn, drawn + 10);
      drawn += 10;
      return `${prefix}_${clock.hex}${random}`;
    },
  };
}

export const randomIds: IdGenerator = timeOrderedIds();

export function sequentialIds(): IdGenerator {
  let counter = 0;
  return { next: (prefix) => `${prefix}_${String(++counter).padStart(6, '0')}` };
}
