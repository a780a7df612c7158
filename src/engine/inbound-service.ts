import type { Logger } from 'pino';
import type { Channel } from '../channels/channel.ts';
import type { Clock, IdGenerator } from '../core/clock.ts';
import type { InboxItem, Participant } from '../core/domain.ts';
import { describeError, isAppError } from '../core/errors.ts';
import type { Store } from '../store/store.ts';
import type { Engine } from './engine.ts';
import type { ParticipantService } from './participant-service.ts';

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

export const UNKNOWN_SENDER_REPLY = "Thanks for your message. This number isn't enrolled in a program yet, so no one will reply here.";

export interface InboundMessage {
  /** Which inbound channel it came through (`http`, `whatsapp`, `twilio`, `web`). */
  channel: string;
  /** Canonical E.164 phone number. */
  sender: string;
  text: string;
  /** The channel's own message id, for deduplication. */
  channelMessageId: string | null;
}

export type InboundResult =
  | { status: 'queued'; inboxId: string; participantId: string; duplicate: boolean; turn: Promise<unknown> }
  | { status: 'unknown-sender'; inboxId: string; duplicate: boolean };

export interface InboundServiceDeps {
  store: Store;
  engine: Engine;
  participants: ParticipantService;
  /** Where the acknowledgement to an unknown sender goes. */
  replyChannel: Channel;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  autoEnroll: boolean;
}

/**
 * Records every inbound message in the inbox before anything else happens, then queues its turn.
 * The returned inbox id can be acknowledged to the sender at once.
 */
export class InboundService {
  readonly #deps: InboundServiceDeps;

  constructor(deps: InboundServiceDeps) {
    this.#deps = deps;
  }

  async receive(message: InboundMessage): Promise<InboundResult> {
    const participant = await this.#participantFor(message.sender);
    if (!participant) return this.#unknownSender(message);
    const conversation = await this.#deps.participants.conversationOf(participant.id);
    const { item, duplicate } = await this.#deps.store.insertInbox(this.#item(message, participant.id, conversation.id, 'pending'));
    // The turn starts on the next turn of the event loop, so the caller's acknowledgement leaves
    // first even when the model answers at once (node:sqlite resolves without yielding).
    const turn = duplicate ? Promise.resolve() : nextTick().then(() => this.#deps.engine.processInbox(item));
    turn.catch((error) => this.#deps.logger.error({ inboxId: item.id, err: describeError(error) }, 'inbound turn failed'));
    return { status: 'queued', inboxId: item.id, participantId: participant.id, duplicate, turn };
  }

  async #participantFor(sender: string): Promise<Participant | undefined> {
    const existing = await this.#deps.store.findParticipantByPhone(sender);
    if (existing || !this.#deps.autoEnroll) return existing;
    try {
      const { participant } = await this.#deps.participants.enroll({ phoneNumber: sender }, { greet: false });
      return participant;
    } catch (error) {
      // Two first messages from one new number raced; the other one enrolled them.
      if (isAppError(error) && error.code === 'participant_exists') return this.#deps.store.findParticipantByPhone(sender);
      throw error;
    }
  }

  async #unknownSender(message: InboundMessage): Promise<InboundResult> {
    const { item, duplicate } = await this.#deps.store.insertInbox(this.#item(message, null, null, 'ignored'));
    if (!duplicate) void this.#acknowledge(item);
    return { status: 'unknown-sender', inboxId: item.id, duplicate };
  }

  async #acknowledge(item: InboxItem): Promise<void> {
    try {
      await this.#deps.replyChannel.send({
        id: this.#deps.ids.next('out'),
        participantId: null,
        conversationId: item.id,
        recipient: item.sender,
        kind: 'text',
        text: UNKNOWN_SENDER_REPLY,
        poll: null,
        createdAt: this.#deps.clock.now(),
        idempotencyKey: `ack:${item.id}`,
      });
    } catch (error) {
      this.#deps.logger.warn({ inboxId: item.id, err: describeError(error) }, 'acknowledgement to unknown sender not delivered');
    }
  }

  #item(message: InboundMessage, participantId: string | null, conversationId: string | null, status: InboxItem['status']): InboxItem {
    return {
      id: this.#deps.ids.next('in'),
      channel: message.channel,
      channelMessageId: message.channelMessageId,
      sender: message.sender,
      text: message.text,
      participantId,
      conversationId,
      status,
      error: null,
      receivedAt: this.#deps.clock.now(),
      processedAt: null,
    };
  }
}
