import type { Logger } from 'pino';
import { ChannelError, type Channel, type OutboundMessage, type SendReceipt } from '../channels/channel.ts';
import type { Clock } from '../core/clock.ts';
import type { ChannelContact } from '../core/domain.ts';
import type { StoreOperations } from '../store/store.ts';

export interface ChannelGateDeps {
  store: Pick<StoreOperations, 'getContact' | 'findContactOfParticipant' | 'setContactOptOut'>;
  clock: Clock;
  logger: Logger;
  /** A provider said a participant unsubscribed: they are paused, as their STOP would have. */
  unsubscribed?: (participantId: string) => Promise<void>;
}

/** A contact read ahead of a send (`ChannelGate.contactFor`); `undefined`: there was none. */
export interface KnownContact {
  contact: ChannelContact | undefined;
}

/**
 * The one place outbound messages pass on their way to a channel, deciding what depends on the
 * person rather than the transport: a contact who opted out is not messaged, whether the
 * channel's service window is open, and what to record when a provider reports an opt-out.
 * Channels without contacts (the webhook, the web) cost no lookup.
 */
export class ChannelGate {
  readonly #deps: ChannelGateDeps;

  constructor(deps: ChannelGateDeps) {
    this.#deps = deps;
  }

  /**
   * Sends unless the contact opted out. `known`: the contact as read earlier (`contactFor`), for a
   * send after it was deleted (the goodbye of a participant whose data is gone).
   */
  async send(
    channel: Channel,
    message: OutboundMessage,
    signal?: AbortSignal,
    known?: KnownContact,
  ): Promise<SendReceipt | void> {
    const contactIdOf = channel.capabilities.contactIdOf;
    if (!contactIdOf) return channel.send(message, { signal });
    const contact = known
      ? known.contact
      : await this.#contactOf(channel.name, message, contactIdOf(message.recipient));
    if (contact?.optedOutAt)
      throw new ChannelError('the recipient opted out (STOP) and cannot be messaged until they send START', {
        retryable: false,
      });
    try {
      return await channel.send(message, { signal, windowOpen: this.#windowOpen(channel, message, contact) });
    } catch (error) {
      if (error instanceof ChannelError && error.optedOut)
        await this.#recordOptOut(channel.name, message, contactIdOf(message.recipient));
      throw error;
    }
  }

  /** The contact `send` would decide `message` on, read now. */
  async contactFor(
    channel: Channel,
    message: Pick<OutboundMessage, 'participantId' | 'recipient'>,
  ): Promise<KnownContact> {
    const contactIdOf = channel.capabilities.contactIdOf;
    return { contact: contactIdOf && (await this.#contactOf(channel.name, message, contactIdOf(message.recipient))) };
  }

  async #contactOf(
    channel: string,
    message: Pick<OutboundMessage, 'participantId'>,
    contactId: string,
  ): Promise<ChannelContact | undefined> {
    const { store } = this.#deps;
    return (
      (message.participantId ? await store.findContactOfParticipant(channel, message.participantId) : undefined) ??
      store.getContact(channel, contactId)
    );
  }

  /** Open when the person wrote within the window; a reply to someone not enrolled answers their message just now. */
  #windowOpen(channel: Channel, message: OutboundMessage, contact: ChannelContact | undefined): boolean {
    const windowMs = channel.capabilities.serviceWindowMs;
    if (windowMs === undefined || message.participantId === null) return true;
    const last = contact?.lastInboundAt;
    return last != null && this.#deps.clock.now().getTime() - last.getTime() < windowMs;
  }

  /** Remembered: no later message is tried until they send START. */
  async #recordOptOut(channel: string, message: OutboundMessage, contactId: string): Promise<void> {
    const { store, clock, logger, unsubscribed } = this.#deps;
    const now = clock.now();
    await store
      .setContactOptOut(channel, contactId, now, now)
      .catch((error: unknown) => logger.warn({ channel, err: error }, 'opt-out not recorded'));
    if (!message.participantId || !unsubscribed) return;
    await unsubscribed(message.participantId).catch((error: unknown) =>
      logger.warn({ participantId: message.participantId, err: error }, 'unsubscribed participant not paused'),
    );
  }
}
