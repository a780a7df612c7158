import {
  ChannelError,
  NO_LIMITS,
  type Channel,
  type ChannelCapabilities,
  type OutboundMessage,
} from '../../src/channels/channel.ts';

/** A channel that records what it is given; it can refuse the first N deliveries. */
export class ChannelSink implements Channel {
  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  readonly delivered: OutboundMessage[] = [];
  readonly attempts: OutboundMessage[] = [];
  #failuresLeft: number;
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(options: { name?: string; failFirst?: number; capabilities?: ChannelCapabilities } = {}) {
    this.name = options.name ?? 'webhook';
    this.capabilities = options.capabilities ?? NO_LIMITS;
    this.#failuresLeft = options.failFirst ?? 0;
  }

  async send(message: OutboundMessage): Promise<void> {
    this.attempts.push(message);
    if (this.#failuresLeft > 0) {
      this.#failuresLeft -= 1;
      throw new ChannelError('sink refused the delivery', { retryable: true });
    }
    this.delivered.push(message);
    this.#waiters = this.#waiters.filter((waiter) => {
      if (this.delivered.length < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  }

  /** Messages delivered to one recipient, in delivery order. */
  to(recipient: string): OutboundMessage[] {
    return this.delivered.filter((message) => message.recipient === recipient);
  }

  /** Resolves once at least `count` messages were delivered, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.delivered.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`expected ${count} deliveries, got ${this.delivered.length}`)),
        timeoutMs,
      );
      this.#waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}
