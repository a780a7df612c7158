import { SpanKind } from '@opentelemetry/api';
import { ChannelError, type Channel, type OutboundMessage, type SendReceipt } from '../channels/channel.ts';
import { describeError } from '../core/errors.ts';
import { ChannelGate, type ChannelGateDeps, type KnownContact } from '../engine/channel-gate.ts';
import { inSpan, type Tracing } from './tracing.ts';

/** What `/health` says of one channel. */
export interface ChannelStatus {
  /** `failing` while its sends fail (see `ChannelHealth`), `ok` after a send went out, `unknown` before any. */
  state: 'ok' | 'failing' | 'unknown';
  lastSuccessAt: string | null;
  lastErrorAt: string | null;
  lastError: string | null;
  /** Whether the last failure is retried (a network error, 5xx, 429) or final for that message (a 4xx). */
  lastErrorRetryable: boolean | null;
  consecutiveFailures: number;
}

/**
 * Consecutive failed sends after which a channel counts as failing even when each failure was final
 * for its message (a 4xx: one bad number says nothing of the channel; three in a row with none
 * through do).
 */
const FAILING_AFTER = 3;

/**
 * Every send's outcome per channel (wall time: operators read it): the last success, the last
 * error and how many failed in a row. A channel is failing when its last send failed with a
 * retryable error (the provider or the network is down), or after `FAILING_AFTER` failures in a row.
 */
export class ChannelHealth {
  /** As `ChannelStatus`, with the times as Dates: formatted only when asked for (a send is hot). */
  readonly #channels = new Map<string, Times<ChannelStatus>>();

  succeeded(channel: string): void {
    const status = this.#of(channel);
    status.lastSuccessAt = new Date();
    status.consecutiveFailures = 0;
    status.state = 'ok';
  }

  failed(channel: string, error: unknown): void {
    const status = this.#of(channel);
    const retryable = !(error instanceof ChannelError) || error.retryable;
    status.lastErrorAt = new Date();
    status.lastError = describeError(error);
    status.lastErrorRetryable = retryable;
    status.consecutiveFailures += 1;
    status.state = retryable || status.consecutiveFailures >= FAILING_AFTER ? 'failing' : status.state;
  }

  /** Each channel that has sent or tried to, by name. */
  get status(): Record<string, ChannelStatus> {
    return Object.fromEntries(
      [...this.#channels].map(([name, status]) => [
        name,
        { ...status, lastSuccessAt: iso(status.lastSuccessAt), lastErrorAt: iso(status.lastErrorAt) },
      ]),
    );
  }

  #of(channel: string): Times<ChannelStatus> {
    let status = this.#channels.get(channel);
    if (!status) {
      status = {
        state: 'unknown',
        lastSuccessAt: null,
        lastErrorAt: null,
        lastError: null,
        lastErrorRetryable: null,
        consecutiveFailures: 0,
      };
      this.#channels.set(channel, status);
    }
    return status;
  }
}

type Times<T> = { [K in keyof T]: K extends `${string}At` ? Date | null : T[K] };

const iso = (date: Date | null) => date?.toISOString() ?? null;

/**
 * The channel gate, watched: each send's outcome goes to `ChannelHealth`, and with tracing on
 * each send is a span (`deliver {channel}`). Its own rules are untouched.
 */
export class ObservedChannelGate extends ChannelGate {
  readonly #health: ChannelHealth;
  readonly #tracing: Tracing | undefined;

  constructor(deps: ChannelGateDeps, watch: { health: ChannelHealth; tracing?: Tracing | undefined }) {
    super(deps);
    this.#health = watch.health;
    this.#tracing = watch.tracing;
  }

  override async send(
    channel: Channel,
    message: OutboundMessage,
    signal?: AbortSignal,
    known?: KnownContact,
  ): Promise<SendReceipt | void> {
    const send = async () => {
      try {
        const receipt = await super.send(channel, message, signal, known);
        this.#health.succeeded(channel.name);
        return receipt;
      } catch (error) {
        // A send the server itself stopped (shutdown) says nothing about the channel.
        if (!signal?.aborted) this.#health.failed(channel.name, error);
        throw error;
      }
    };
    if (!this.#tracing) return send();
    const attempts = (message as Partial<{ attempts: number }>).attempts;
    const span = this.#tracing.tracer.startSpan(`deliver ${channel.name}`, {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.operation.type': 'send',
        'messaging.system': channel.name,
        'messaging.message.id': message.id,
        'promptpipe.channel': channel.name,
        'promptpipe.conversation.id': message.conversationId,
        ...(typeof attempts === 'number' ? { 'promptpipe.delivery.attempt': attempts + 1 } : {}),
      },
    });
    return inSpan(span, send, (receipt) => {
      if (receipt?.providerMessageId) span.setAttribute('promptpipe.provider_message_id', receipt.providerMessageId);
    });
  }
}
