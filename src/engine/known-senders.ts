import type { Conversation, Participant } from '../core/domain.ts';

/** Who a phone number was when last heard from: the record a new message of theirs is made for. */
export interface KnownSender {
  readonly participantId: string;
  /** Their conversation (its id and flow: what an inbox record of theirs says and how it is redacted). */
  readonly conversation: Pick<Conversation, 'id' | 'flow'>;
}

/**
 * The senders this process heard from lately, by phone number, most recent last (bounded). Only
 * a guess: a message is recorded for a known sender in a statement that checks who the number is
 * now, and only if that is still them (`Store.recordForSender`).
 */
export class KnownSenders {
  readonly #limit: number;
  readonly #senders = new Map<string, KnownSender>();

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  get(phoneNumber: string): KnownSender | undefined {
    return this.#senders.get(phoneNumber);
  }

  /** The number was heard from again as the same sender: the last to be forgotten. */
  renew(phoneNumber: string): void {
    const known = this.#senders.get(phoneNumber);
    if (!known) return;
    this.#senders.delete(phoneNumber);
    this.#senders.set(phoneNumber, known);
  }

  /**
   * What the number resolved to: an active participant with a conversation is remembered, anything
   * else forgotten (a paused participant's message is read the long way, which says they are paused).
   */
  learn(phoneNumber: string, participant: Participant | undefined, conversation: Conversation | undefined): void {
    this.#senders.delete(phoneNumber);
    if (!participant || !conversation || participant.status !== 'active') return;
    this.#senders.set(phoneNumber, {
      participantId: participant.id,
      conversation: { id: conversation.id, flow: conversation.flow },
    });
    if (this.#senders.size > this.#limit) this.#senders.delete(this.#senders.keys().next().value!);
  }
}
