import type { Logger } from 'pino';
import type { ChannelDirectory } from '../channels/channel.ts';
import type { Clock, IdGenerator } from '../core/clock.ts';
import type { InboxItem, Participant } from '../core/domain.ts';
import { describeError, isAppError } from '../core/errors.ts';
import type { Store } from '../store/store.ts';
import type { Engine } from './engine.ts';
import type { Outgoing } from './outgoing.ts';
import type { ParticipantService } from './participant-service.ts';

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

export const UNKNOWN_SENDER_REPLY = "Thanks for your message. This number isn't enrolled in a program yet, so no one will reply here.";
export const UNSUPPORTED_CONTENT_REPLY = "Sorry, I can only read text messages here. Could you write your message as text?";

export interface InboundMessage {
  /** Which inbound channel it came through (`http`, `whatsapp`, `twilio`, `web`). */
  channel: string;
  /** The sender's address: canonical E.164 when known, else the channel's own id for them. */
  sender: string;
  /**
   * The channel's stable id for the person (WhatsApp: business-scoped user id, else `wa_id`;
   * SMS: E.164). Given, the contact is recorded: who they are, and when they last wrote.
   */
  contactId?: string;
  text: string;
  /** The channel's own message id, for deduplication. */
  channelMessageId: string | null;
  /** When the person sent it, if the channel says (never later than now is used). */
  sentAt?: Date;
  /** Set for content we cannot read (`image`, `audio`, …): recorded and answered politely, no turn. */
  unsupported?: string;
}

export type InboundResult =
  | { status: 'queued'; inboxId: string; participantId: string; duplicate: boolean; turn: Promise<unknown> }
  | { status: 'unknown-sender'; inboxId: string; duplicate: boolean }
  | { status: 'unsupported'; inboxId: string; duplicate: boolean };

export interface InboundServiceDeps {
  store: Store;
  engine: Engine;
  participants: ParticipantService;
  /** Where acknowledgements go: the channel a message came through, else the default one. */
  channels: ChannelDirectory;
  outgoing: Outgoing;
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
    const participant = await this.#participantFor(message);
    await this.#recordContact(message, participant);
    if (!participant) return this.#unknownSender(message);
    const conversation = await this.#deps.participants.conversationOf(participant.id);
    // Replies go where the person last wrote, if that channel can send (decision 003).
    if (this.#deps.channels.get(message.channel) && conversation.channel !== message.channel) {
      await this.#deps.store.setConversationChannel(conversation.id, message.channel, this.#deps.clock.now());
    }
    const status = message.unsupported ? 'ignored' : 'pending';
    const { item, duplicate } = await this.#deps.store.insertInbox(this.#item(message, participant.id, conversation.id, status));
    if (message.unsupported) {
      if (!duplicate && participant.status === 'active') this.#answerWithoutTurn(conversation.id, participant, UNSUPPORTED_CONTENT_REPLY);
      return { status: 'unsupported', inboxId: item.id, duplicate };
    }
    // The turn starts on the next turn of the event loop, so the caller's acknowledgement leaves
    // first even when the model answers at once (node:sqlite resolves without yielding).
    const turn = duplicate ? Promise.resolve() : nextTick().then(() => this.#deps.engine.processInbox(item));
    turn.catch((error) => this.#deps.logger.error({ inboxId: item.id, err: describeError(error) }, 'inbound turn failed'));
    return { status: 'queued', inboxId: item.id, participantId: participant.id, duplicate, turn };
  }

  /**
   * A message the channel acts on itself (an SMS keyword): recorded, never a turn, never an
   * enrollment. `reply`, when given, is answered once (not again for a redelivery).
   */
  async receiveCommand(message: InboundMessage, reply: string | null): Promise<{ duplicate: boolean; participant: Participant | undefined }> {
    const participant = await this.#participantFor(message, { enroll: false });
    await this.#recordContact(message, participant);
    const conversation = participant && (await this.#deps.store.findConversationByParticipant(participant.id));
    const { item, duplicate } = await this.#deps.store.insertInbox(this.#item(message, participant?.id ?? null, conversation?.id ?? null, 'ignored'));
    if (!duplicate && reply !== null) {
      if (participant && conversation) this.#answerWithoutTurn(conversation.id, participant, reply);
      else void this.#acknowledge(item, reply);
    }
    return { duplicate, participant };
  }

  async #participantFor(message: InboundMessage, options: { enroll: boolean } = { enroll: true }): Promise<Participant | undefined> {
    const { store } = this.#deps;
    const contact = message.contactId ? await store.getContact(message.channel, message.contactId) : undefined;
    const linked = contact?.participantId ? await store.getParticipant(contact.participantId) : undefined;
    if (linked) return linked;
    if (!message.sender.startsWith('+')) return undefined;
    const existing = await store.findParticipantByPhone(message.sender);
    if (existing || !this.#deps.autoEnroll || !options.enroll) return existing;
    try {
      const { participant } = await this.#deps.participants.enroll({ phoneNumber: message.sender, channel: this.#deps.channels.get(message.channel)?.name }, { greet: false });
      return participant;
    } catch (error) {
      // Two first messages from one new number raced; the other one enrolled them.
      if (isAppError(error) && error.code === 'participant_exists') return store.findParticipantByPhone(message.sender);
      throw error;
    }
  }

  async #recordContact(message: InboundMessage, participant: Participant | undefined): Promise<void> {
    if (!message.contactId) return;
    const now = this.#deps.clock.now();
    const sentAt = message.sentAt && message.sentAt < now ? message.sentAt : now;
    const phoneNumber = message.sender.startsWith('+') ? message.sender : (participant?.phoneNumber ?? null);
    await this.#deps.store.recordContactInbound({ channel: message.channel, contactId: message.contactId, participantId: participant?.id ?? null, phoneNumber }, sentAt);
  }

  /**
   * Queues a fixed answer in the conversation's turn (after whatever is running), without
   * holding up the caller's acknowledgement.
   */
  #answerWithoutTurn(conversationId: string, participant: Participant, text: string): void {
    const { engine, store, outgoing, clock, logger } = this.#deps;
    engine
      .exclusive(conversationId, () =>
        store.transaction(async (tx) => {
          const conversation = (await tx.getConversation(conversationId))!;
          // A system message: the person sees it, the model does not read it.
          await outgoing.append(tx, { conversation, participant }, [{ text, role: 'system', source: 'system' }], { now: clock.now(), turnId: null });
        }),
      )
      .catch((error: unknown) => logger.error({ conversationId, err: describeError(error) }, 'fixed answer not queued'));
  }

  async #unknownSender(message: InboundMessage): Promise<InboundResult> {
    const { item, duplicate } = await this.#deps.store.insertInbox(this.#item(message, null, null, 'ignored'));
    if (!duplicate) void this.#acknowledge(item);
    return { status: 'unknown-sender', inboxId: item.id, duplicate };
  }

  async #acknowledge(item: InboxItem, text = UNKNOWN_SENDER_REPLY): Promise<void> {
    const channel = this.#deps.channels.get(item.channel) ?? this.#deps.channels.defaultChannel;
    try {
      await channel.send({
        id: this.#deps.ids.next('out'),
        participantId: null,
        conversationId: item.id,
        recipient: item.sender,
        kind: 'text',
        text,
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
      text: message.unsupported ? `[${message.unsupported}]` : message.text,
      participantId,
      conversationId,
      status,
      error: null,
      receivedAt: this.#deps.clock.now(),
      processedAt: null,
    };
  }
}
