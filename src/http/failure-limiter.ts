import { isIPv6 } from 'node:net';

export interface FailureLimiterOptions {
  /** Failures a key may have per window; the next request is refused until the window ends. */
  limit: number;
  windowMs: number;
  /** Wall time in ms (injected for tests). */
  now?: () => number;
  /** Keys remembered at most; past it the oldest are forgotten (a flood of addresses cannot grow memory). */
  maxKeys?: number;
}

/**
 * Counts failures (wrong credentials) per client address in a window that starts at the first
 * failure: after `limit` of them the address is blocked until the window ends. In memory, per
 * process (decision 010).
 */
export class FailureLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #maxKeys: number;
  readonly #windows = new Map<string, { startedAt: number; failures: number }>();

  constructor(options: FailureLimiterOptions) {
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
    this.#maxKeys = options.maxKeys ?? 10_000;
  }

  /** How long `key` must wait before it may try again, in ms; 0 when it may now. */
  blockedFor(key: string): number {
    const window = this.#current(key);
    return window && window.failures >= this.#limit ? window.startedAt + this.#windowMs - this.#now() : 0;
  }

  record(key: string): void {
    const window = this.#current(key);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= this.#maxKeys) this.#windows.delete(this.#windows.keys().next().value!);
    this.#windows.set(key, { startedAt: this.#now(), failures: 1 });
  }

  #current(key: string) {
    const window = this.#windows.get(key);
    if (window && window.startedAt + this.#windowMs <= this.#now()) {
      this.#windows.delete(key);
      return undefined;
    }
    return window;
  }
}

/** The key of a client address: IPv6 by its /64 (one host usually holds the whole prefix). */
export function clientKey(ip: string): string {
  if (!isIPv6(ip) || ip.startsWith('::ffff:')) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
