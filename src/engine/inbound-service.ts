import type { Logger } from 'pino';
import type { ChannelGate } from './channel-gate.ts';
import type { ChannelDirectory } from '../channels/channel.ts';
import type { Clock, IdGenerator } from '../core/clock.ts';
import type { Conversation, InboxItem, Participant } from '../core/domain.ts';
import { isAppError } from '../core/errors.ts';
import type { EnginePort, EngineTx } from '../store/store.ts';
import type { Engine, InboxOrder } from './engine.ts';
import type { Outgoing } from './outgoing.ts';
import type { ParticipantService, ParticipantUpdateTx } from './participant-service.ts';
import { KnownSenders } from './known-senders.ts';
import {
  storable,
  UNKNOWN_SENDER_REPLY,
  UNSUPPORTED_CONTENT_REPLY,
  type InboundMessage,
  type InboundResult,
} from './inbound-message.ts';

type Recorded = { item: InboxItem; duplicate: boolean; differentText: boolean; behind?: boolean };
/** A sender as the store reads them by phone number. */
type FoundSender = Awaited<ReturnType<InboundStore['findSenderByPhone']>>;
/** A message's sender as resolved before its batch is recorded; both unset for someone not enrolled. */
type Sender = { participant: Participant | undefined; conversation: Conversation | undefined };

/** Indexes of the messages naming a contact, ordered by contact (stable: one contact's keep their order). */
const byContact = (messages: readonly InboundMessage[]): number[] =>
  [...messages.keys()]
    .filter((index) => messages[index]!.contactId !== undefined)
    .sort((a, b) => compare(contactKey(messages[a]!), contactKey(messages[b]!)) || a - b);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const contactKey = (message: InboundMessage) => `${message.channel}\n${message.contactId ?? ''}`;

/** A message that names no contact, from a phone number: its sender is found by that number. */
const plainFromPhone = (message: InboundMessage) => message.contactId === undefined && message.sender.startsWith('+');

/** The fixed answer to content we cannot read, for an active participant. */
const unsupportedAnswer = (message: InboundMessage, participant: Participant): string | null =>
  message.unsupported && participant.status === 'active' ? UNSUPPORTED_CONTENT_REPLY : null;

/** An inbox insert's outcome, telling a redelivery (same text) from a reused id (another text). */
function recorded(result: { item: InboxItem; duplicate: boolean; behind?: boolean }, attempted: InboxItem): Recorded {
  return { ...result, differentText: result.duplicate && result.item.text !== attempted.text };
}

/**
 * What a command's `effects` get of the transaction recording it: the contact's opt-out, and what
 * changing the participant takes (`ParticipantService.updateIn`: an SMS STOP pauses them).
 */
export type CommandTx = Pick<EngineTx, 'setContactOptOut'> & ParticipantUpdateTx;

/**
 * What the inbound service's transactions (and batched writes) hand it: the inbox row, the
 * contact, the reply channel, a fixed answer (transcript and outbox), and a command's effects.
 */
export type InboundTx = Pick<
  EngineTx,
  | 'insertInbox'
  | 'recordForSender'
  | 'recordContactInbound'
  | 'setConversationChannel'
  | 'appendMessages'
  | 'enqueueOutbox'
> &
  CommandTx;

/** The inbound service's view of the store: resolving senders, recording messages, the daily notice's check. */
export type InboundStore = Pick<
  EnginePort<InboundTx>,
  | 'transaction'
  | 'batched'
  | 'insertInbox'
  | 'recordContactInbound'
  | 'firstInboxFrom'
  | 'getContact'
  | 'getParticipant'
  | 'findParticipantByPhone'
  | 'findSenderByPhone'
  | 'recordForSender'
  | 'findConversationByParticipant'
>;

export interface InboundServiceDeps {
  store: InboundStore;
  engine: Engine;
  participants: ParticipantService;
  /** Where acknowledgements go: the channel a message came through, else the default one. */
  channels: ChannelDirectory;
  /** Direct sends (not through the outbox) pass it too. */
  gate: ChannelGate;
  outgoing: Outgoing;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
  autoEnroll: boolean;
  /** The active trace as a W3C `traceparent` (tracing on), stored with each message for its turn. */
  traceParent?: () => string | undefined;
}

/**
 * Records every inbound message in the inbox before anything else happens, then queues its turn.
 * The returned inbox id can be acknowledged to the sender at once.
 */
export class InboundService {
  readonly #deps: InboundServiceDeps;
  readonly #known = new KnownSenders();

  constructor(deps: InboundServiceDeps) {
    this.#deps = deps;
  }

  async receive(message: InboundMessage): Promise<InboundResult> {
    const [result] = await this.receiveBatch([message]);
    return result!;
  }

  /**
   * Several messages of one provider webhook, recorded as `receive` records each, in one
   * transaction: all of them are in the inbox, or none. Senders are resolved first, outside it
   * (enrolling one takes its own transaction); turns and acknowledgements start once it committed.
   */
  async receiveBatch(given: readonly InboundMessage[]): Promise<InboundResult[]> {
    const messages = given.map(storable);
    const known = messages.length === 1 ? await this.#recordKnownSender(messages[0]!) : undefined;
    if (known && 'queued' in known) return [known.queued];
    const senders = await this.#resolveSenders(messages, known?.read);
    // Read before recording: a lease held since then means nobody else answered them meanwhile.
    const held = senders.map(({ conversation }) => conversation && this.#deps.engine.leaseHeldSince(conversation.id));
    const recorded = await this.#recordAll(messages, senders);
    const results: InboundResult[] = [];
    const checked = new Set<string>();
    for (const [index, message] of messages.entries()) {
      const order = { first: recorded[index]!.behind === false, heldSince: held[index] ?? undefined };
      results.push(await this.#afterRecorded(message, senders[index]!, recorded[index]!, checked, order));
    }
    return results;
  }

  /**
   * A plain message from a number heard from before, recorded for who they were then in one
   * statement that writes only if that is who the number still is (`Store.recordForSender`):
   * `queued` then. Else what the store read of who they are now (`read`, for `#resolveSenders`).
   * Undefined when the message is not one to try this with.
   */
  async #recordKnownSender(
    message: InboundMessage,
  ): Promise<{ queued: InboundResult } | { read: { found: FoundSender } } | undefined> {
    if (!plainFromPhone(message) || message.unsupported) return undefined;
    const known = this.#known.get(message.sender);
    if (!known) return undefined;
    const { engine, store } = this.#deps;
    const heldSince = engine.leaseHeldSince(known.conversation.id);
    const attempted = this.#item(message, known.participantId, known.conversation, 'pending');
    const channel = this.#replyChannel(message);
    const record = (ops: Pick<InboundTx, 'recordForSender'>) =>
      ops.recordForSender(message.sender, attempted, {
        flow: known.conversation.flow,
        ...(channel ? { channel } : {}),
      });
    // While turns run, the acknowledgement may share their commit (SQLite's group commit, decision 020).
    const recording = engine.backlog > 0 ? store.batched(record, { gather: true }) : record(store);
    // Its turn's context is read meanwhile, on another connection: the two round trips overlap.
    if (heldSince !== undefined) engine.readAhead(known.conversation.id);
    const answer = await recording;
    if (answer.recorded && !answer.recorded.duplicate) {
      this.#known.renew(message.sender);
      const turn = this.#queueTurn(answer.recorded.item, { first: !answer.recorded.behind, heldSince });
      const { participantId } = known;
      return {
        queued: {
          status: 'queued',
          inboxId: attempted.id,
          participantId,
          duplicate: false,
          differentText: false,
          turn,
          answered: true, // the statement that recorded it checked they are active
        },
      };
    }
    const read = answer.sender;
    this.#known.learn(message.sender, read?.participant, read?.conversation);
    if (!answer.recorded || !read) return { read: { found: read } };
    const sender: Sender = { participant: read.participant, conversation: read.conversation };
    return {
      queued: await this.#afterRecorded(message, sender, recorded(answer.recorded, attempted), new Set(), {
        heldSince,
      }),
    };
  }

  /**
   * Who sent each message, and their conversation. Within one batch, a sender (contact and
   * address) seen before resolves as it did then: the first message links the contact (or
   * enrolled them), which is what the later ones would have read.
   */
  async #resolveSenders(messages: readonly InboundMessage[], firstRead?: { found: FoundSender }): Promise<Sender[]> {
    const known = new Map<string, Participant | undefined>();
    const conversations = new Map<string, Conversation>();
    const senders: Sender[] = [];
    for (const [index, message] of messages.entries()) {
      const key = `${message.channel}\n${message.contactId ?? ''}\n${message.sender}`;
      const found = known.has(key)
        ? { participant: known.get(key) }
        : await this.#senderOf(message, index === 0 ? firstRead : undefined);
      const participant = found.participant;
      known.set(key, participant);
      if (!participant) {
        senders.push({ participant: undefined, conversation: undefined });
        continue;
      }
      const conversation =
        ('conversation' in found ? found.conversation : undefined) ??
        conversations.get(participant.id) ??
        (await this.#deps.participants.conversationOf(participant.id));
      conversations.set(participant.id, conversation);
      senders.push({ participant, conversation });
      if (plainFromPhone(message)) this.#known.learn(message.sender, participant, conversation);
    }
    return senders;
  }

  /**
   * The batch's inbox records, in one transaction; one message that writes only its inbox row (the
   * common case) is one statement.
   */
  async #recordAll(messages: readonly InboundMessage[], senders: Sender[]): Promise<Recorded[]> {
    if (messages.length === 1 && this.#insertOnly(messages[0]!, senders[0]!)) {
      // While turns run, the acknowledgement may share their commit (group commit, decision 020).
      const gather = this.#deps.engine.backlog > 0;
      return [await this.#deps.store.batched((ops) => this.#recordInbound(ops, messages[0]!, senders[0]!), { gather })];
    }
    return this.#deps.store.transaction(async (tx) => {
      // Contacts first, in one order for every batch: two batches locking the same contacts
      // (PostgreSQL) wait for each other instead of deadlocking. Inbox rows keep the batch's order.
      for (const index of byContact(messages))
        await this.#recordContact(tx, messages[index]!, senders[index]!.participant);
      const results: Recorded[] = [];
      for (const [index, message] of messages.entries())
        results.push(await this.#recordInbound(tx, message, senders[index]!));
      return results;
    });
  }

  /** The configured channel the message asks replies to go through, if any. */
  #replyChannel(message: InboundMessage): string | undefined {
    return message.replyChannel && this.#deps.channels.get(message.replyChannel) ? message.replyChannel : undefined;
  }

  /** True when recording `message` writes its inbox row and nothing else (no contact, answer or channel move). */
  #insertOnly(message: InboundMessage, { participant, conversation }: Sender): boolean {
    if (message.contactId !== undefined) return false;
    if (!participant || !conversation) return true;
    const replyChannel = this.#replyChannel(message);
    return unsupportedAnswer(message, participant) === null && !(replyChannel && conversation.channel !== replyChannel);
  }

  /** The inbox record of one message (and a fixed answer), in the batch's transaction. */
  async #recordInbound(
    tx: InboundTx,
    message: InboundMessage,
    { participant, conversation }: Sender,
  ): Promise<Recorded> {
    if (!participant || !conversation) {
      const attempted = this.#item(message, null, null, 'ignored');
      return recorded(await tx.insertInbox(attempted), attempted);
    }
    const status = message.unsupported ? 'ignored' : 'pending';
    return this.#recordIn(tx, message, participant, conversation, status, unsupportedAnswer(message, participant));
  }

  /** What follows a committed message: its turn, an acknowledgement, a delivery kick. */
  async #afterRecorded(
    message: InboundMessage,
    { participant, conversation }: Sender,
    { item, duplicate, differentText }: Recorded,
    checked: Set<string>,
    order: InboxOrder,
  ): Promise<InboundResult> {
    if (!participant || !conversation) return this.#unknownSender(item, duplicate, differentText, checked);
    if (!duplicate && unsupportedAnswer(message, participant) !== null) this.#deps.engine.notify(conversation.id);
    if (message.unsupported) return { status: 'unsupported', inboxId: item.id, duplicate, differentText };
    // The turn starts on the next turn of the event loop, so the caller's acknowledgement leaves
    // first even when the model answers at once (node:sqlite resolves without yielding).
    const turn = duplicate ? Promise.resolve() : this.#queueTurn(item, order);
    const answered = participant.status === 'active';
    return {
      status: 'queued',
      inboxId: item.id,
      participantId: participant.id,
      duplicate,
      differentText,
      turn,
      answered,
    };
  }

  /** The turn of a newly recorded message, on the next turn of the event loop; its failure is logged. */
  #queueTurn(item: InboxItem, order?: InboxOrder): Promise<unknown> {
    const turn = this.#deps.engine.processInboxSoon(item, order);
    turn.catch((error) => this.#deps.logger.error({ inboxId: item.id, err: error }, 'inbound turn failed'));
    return turn;
  }

  /**
   * A message typed into a web session that has no participant (a service-desk caller): recorded
   * for the conversation itself, then its turn is queued.
   */
  async receiveForConversation(
    conversation: Conversation,
    text: string,
    messageId: string | null,
  ): Promise<InboundResult> {
    const message = storable({
      channel: 'web',
      sender: `web:${conversation.id}`,
      text,
      channelMessageId: messageId === null ? null : `${conversation.id}:${messageId}`,
    });
    const attempted = this.#item(message, null, conversation, 'pending');
    const { item, duplicate, differentText } = recorded(await this.#deps.store.insertInbox(attempted), attempted);
    const turn = duplicate ? Promise.resolve() : this.#deps.engine.processInboxSoon(item);
    turn.catch((error) => this.#deps.logger.error({ inboxId: item.id, err: error }, 'inbound turn failed'));
    return { status: 'queued', inboxId: item.id, participantId: null, duplicate, differentText, turn, answered: true };
  }

  /**
   * A message the channel acts on itself (an SMS keyword): recorded, never a turn, never an
   * enrollment. `effects` and the `reply` (on the channel it came through) commit in the same
   * transaction as the inbox record, so a failure leaves nothing and the provider's retry redoes
   * it all, while a redelivery of a handled message changes nothing.
   */
  async receiveCommand(
    message: InboundMessage,
    reply: string | null,
    effects: (tx: CommandTx, participant: Participant | undefined) => Promise<void>,
  ): Promise<{ duplicate: boolean; participant: Participant | undefined }> {
    const participant = await this.#participantFor(message, { enroll: false });
    await this.#recordContact(this.#deps.store, message, participant);
    const conversation = participant && (await this.#deps.store.findConversationByParticipant(participant.id));
    const { item, duplicate } = await this.#record(message, participant, conversation, 'ignored', reply, effects);
    if (!duplicate && reply !== null && !conversation) void this.#acknowledge(item, reply);
    return { duplicate, participant };
  }

  /**
   * The inbox record, and with a new message in the same transaction: the move of the reply
   * channel to where the person now writes (decision 003), `effects`, and a fixed `answer` (a
   * system message the model does not read) on the channel the message came through.
   */
  async #record(
    message: InboundMessage,
    participant: Participant | undefined,
    conversation: Conversation | undefined,
    status: InboxItem['status'],
    answer: string | null,
    effects?: (tx: CommandTx, participant: Participant | undefined) => Promise<void>,
  ): Promise<Recorded> {
    const result = await this.#deps.store.transaction((tx) =>
      this.#recordIn(tx, message, participant, conversation, status, answer, effects),
    );
    if (!result.duplicate && conversation && answer !== null) this.#deps.engine.notify(conversation.id);
    return result;
  }

  /** `#record`'s writes, in the caller's transaction (the caller notifies the engine after commit). */
  async #recordIn(
    tx: InboundTx,
    message: InboundMessage,
    participant: Participant | undefined,
    conversation: Conversation | undefined,
    status: InboxItem['status'],
    answer: string | null,
    effects?: (tx: CommandTx, participant: Participant | undefined) => Promise<void>,
  ): Promise<Recorded> {
    const { outgoing, clock } = this.#deps;
    const attempted = this.#item(message, participant?.id ?? null, conversation, status);
    const inserted = recorded(await tx.insertInbox(attempted), attempted);
    if (inserted.duplicate) return inserted;
    const now = clock.now();
    const replyChannel = this.#replyChannel(message);
    // Effects first: they may lock the participant, and every transaction takes the participant
    // before the conversation (a turn's commit does), so two never wait on each other.
    await effects?.(tx, participant);
    if (conversation && replyChannel && conversation.channel !== replyChannel)
      await tx.setConversationChannel(conversation.id, replyChannel, now);
    if (conversation && participant && answer !== null) {
      const target = { conversation: { ...conversation, channel: replyChannel ?? conversation.channel }, participant };
      await outgoing.append(tx, target, [{ text: answer, role: 'system', source: 'system' }], { now, turnId: null });
    }
    return inserted;
  }

  /**
   * The sender by their number and their conversation in one read when that is all it takes; else
   * `#participantFor`.
   */
  async #senderOf(
    message: InboundMessage,
    read?: { found: FoundSender },
  ): Promise<{ participant: Participant | undefined; conversation?: Conversation }> {
    if (plainFromPhone(message)) {
      const found = read ? read.found : await this.#deps.store.findSenderByPhone(message.sender);
      if (found) return found;
    }
    return { participant: await this.#participantFor(message) };
  }

  async #participantFor(
    message: InboundMessage,
    options: { enroll: boolean } = { enroll: true },
  ): Promise<Participant | undefined> {
    const { store } = this.#deps;
    const contact = message.contactId ? await store.getContact(message.channel, message.contactId) : undefined;
    const linked = contact?.participantId ? await store.getParticipant(contact.participantId) : undefined;
    if (linked) return linked;
    if (!message.sender.startsWith('+')) return undefined;
    const existing = await store.findParticipantByPhone(message.sender);
    if (existing || !this.#deps.autoEnroll || !options.enroll) return existing;
    try {
      const { participant } = await this.#deps.participants.enroll(
        {
          phoneNumber: message.sender,
          channel: message.replyChannel && this.#deps.channels.get(message.replyChannel)?.name,
        },
        { greet: false },
      );
      return participant;
    } catch (error) {
      // Two first messages from one new number raced; the other one enrolled them.
      if (isAppError(error) && error.code === 'participant_exists') return store.findParticipantByPhone(message.sender);
      throw error;
    }
  }

  async #recordContact(
    store: Pick<EngineTx, 'recordContactInbound'>,
    message: InboundMessage,
    participant: Participant | undefined,
  ): Promise<void> {
    if (!message.contactId) return;
    const now = this.#deps.clock.now();
    const sentAt = message.sentAt && message.sentAt < now ? message.sentAt : now;
    const phoneNumber = message.sender.startsWith('+') ? message.sender : (participant?.phoneNumber ?? null);
    await store.recordContactInbound(
      { channel: message.channel, contactId: message.contactId, participantId: participant?.id ?? null, phoneNumber },
      sentAt,
    );
  }

  /**
   * Someone not enrolled is told so once a day (UTC) at most, whatever they send: a number that
   * keeps writing (or a script) does not cost a reply per message. The first message of the day
   * is answered, so two arriving together still get exactly one.
   */
  async #unknownSender(
    item: InboxItem,
    duplicate: boolean,
    differentText: boolean,
    checked: Set<string>,
  ): Promise<InboundResult> {
    // In a batch only a sender's first new message can be their first of the day: later ones are not looked up.
    const sender = `${item.channel}\n${item.sender}`;
    if (!duplicate && !checked.has(sender)) {
      checked.add(sender);
      const since = new Date(this.#deps.clock.now().toISOString().slice(0, 10));
      if ((await this.#deps.store.firstInboxFrom(item.channel, item.sender, since))?.id === item.id)
        void this.#acknowledge(item);
    }
    return { status: 'unknown-sender', inboxId: item.id, duplicate, differentText };
  }

  async #acknowledge(item: InboxItem, text = UNKNOWN_SENDER_REPLY): Promise<void> {
    const channel = this.#deps.channels.get(item.channel) ?? this.#deps.channels.defaultChannel;
    try {
      await this.#deps.gate.send(channel, {
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
      this.#deps.logger.warn({ inboxId: item.id, err: error }, 'acknowledgement to unknown sender not delivered');
    }
  }

  /**
   * The inbox row. A flow that redacts (the assistant) gets the text redacted here, before it is
   * stored anywhere: the inbox, the transcript, the search index and every model call see only that.
   */
  #item(
    message: InboundMessage,
    participantId: string | null,
    conversation: Pick<Conversation, 'id' | 'flow'> | null | undefined,
    status: InboxItem['status'],
  ): InboxItem {
    const redact = conversation ? this.#deps.participants.findFlowOf(conversation)?.redactInput : undefined;
    return {
      id: this.#deps.ids.next('in'),
      channel: message.channel,
      channelMessageId: message.channelMessageId,
      sender: message.sender,
      text: message.unsupported ? `[${message.unsupported}]` : (redact?.(message.text) ?? message.text),
      participantId,
      conversationId: conversation?.id ?? null,
      status,
      error: null,
      receivedAt: this.#deps.clock.now(),
      processedAt: null,
      traceParent: this.#deps.traceParent?.() ?? null,
    };
  }
}
