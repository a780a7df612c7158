import type { MessageKind, Poll } from '../core/domain.ts';

/** What a channel can do; the engine adapts to capabilities, never to a channel's name. */
export interface ChannelCapabilities {
  /** Native poll messages; without them polls go out as numbered text options. */
  polls: boolean;
  /** Longest text one message may carry. */
  maxTextLength: number;
}

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

/**
 * A way to reach people. `send` resolves once the channel accepted the message and throws a
 * `ChannelError` otherwise; `retryable: false` means trying again cannot help.
 */
export interface Channel {
  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  send(message: OutboundMessage, signal?: AbortSignal): Promise<void>;
}

export class ChannelError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'ChannelError';
    this.retryable = options.retryable;
  }
}
