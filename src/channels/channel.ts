import type { MessageKind, Poll } from '../core/domain.ts';

/** What a channel can do; the engine adapts to capabilities, never to a channel's name. */
export interface ChannelCapabilities {
  /**
   * Native choice messages (polls, reply buttons, lists) and their limits; null when the channel
   * has none. A poll beyond the limits goes out as numbered text.
   */
  polls: { maxOptions: number; maxOptionLength: number } | null;
  /** Longest text one message may carry; longer texts go out in several parts. */
  maxTextLength: number;
  /**
   * Free-form messages are allowed only this long after the person's last message (WhatsApp:
   * 24 h); outside it the channel falls back to what it can send (a template). None = no window.
   */
  serviceWindowMs?: number;
  /**
   * The key of a recipient's contact record on this channel (WhatsApp: the wa_id digits). Present
   * on channels whose contacts carry opt-outs or a service window: the engine then looks the
   * contact up before each send, refuses one who opted out, and says whether the window is open.
   */
  contactIdOf?(recipient: string): string;
}

/** What the engine tells a channel about one send. */
export interface SendContext {
  signal?: AbortSignal;
  /** False when the channel has a service window and it is closed for this recipient. */
  windowOpen?: boolean;
}

/** A channel that carries any poll and any length as is (the generic webhook, test sinks). */
export const NO_LIMITS: ChannelCapabilities = Object.freeze({
  polls: { maxOptions: Infinity, maxOptionLength: Infinity },
  maxTextLength: Infinity,
});

export interface OutboundMessage {
  id: string;
  participantId: string | null;
  conversationId: string;
  recipient: string;
  kind: MessageKind;
  text: string;
  poll: Poll | null;
  createdAt: Date;
  /** The same on every attempt of one message, so the receiver can drop duplicates. */
  idempotencyKey: string;
}

/** What the provider said when it accepted a message. */
export interface SendReceipt {
  /** The provider's id of the message (wamid, MessageSid), which its status callbacks carry. */
  providerMessageId?: string;
}

/**
 * A way to reach people. `send` resolves once the channel accepted the message and throws a
 * `ChannelError` otherwise; `retryable: false` means trying again cannot help.
 */
export interface Channel {
  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  send(message: OutboundMessage, context?: SendContext): Promise<SendReceipt | void>;
}

export class ChannelError extends Error {
  readonly retryable: boolean;
  /** The provider says the recipient unsubscribed (Twilio 21610): the engine records the opt-out. */
  readonly optedOut: boolean;
  constructor(message: string, options: { retryable: boolean; optedOut?: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'ChannelError';
    this.retryable = options.retryable;
    this.optedOut = options.optedOut ?? false;
  }
}

/** The channels this server runs, by name, and the one new participants are reached on. */
export class ChannelDirectory {
  readonly #channels: ReadonlyMap<string, Channel>;
  readonly defaultChannel: Channel;

  /** The first channel is the default. */
  constructor(channels: readonly Channel[]) {
    if (channels.length === 0) throw new Error('at least one channel is needed');
    this.#channels = new Map(channels.map((channel) => [channel.name, channel]));
    this.defaultChannel = channels[0]!;
  }

  get names(): string[] {
    return [...this.#channels.keys()];
  }

  get(name: string): Channel | undefined {
    return this.#channels.get(name);
  }

  /** The named channel, or the default one when there is none of that name (a `web` session). */
  resolve(name: string): Channel {
    return this.#channels.get(name) ?? this.defaultChannel;
  }
}
