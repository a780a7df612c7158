import { NUL, replaceNul } from '../core/nul.ts';

// What a channel hands the inbound service, what it answers, and the fixed replies it sends.

export const UNKNOWN_SENDER_REPLY =
  "Thanks for your message. This number isn't enrolled in a program yet, so no one will reply here.";
export const UNSUPPORTED_CONTENT_REPLY =
  'Sorry, I can only read text messages here. Could you write your message as text?';

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
  /**
   * The channel the person wrote on, when replies should follow them there (a provider webhook);
   * unset for the console, web sessions and the generic HTTP channel, which do not move replies.
   */
  replyChannel?: string;
}

/**
 * What became of a message. `duplicate`: its channel message id was seen before, and nothing
 * happened; `differentText` on top: that earlier message said something else (a client reusing
 * ids, which the HTTP API refuses; providers never do).
 */
export type InboundResult = { inboxId: string; duplicate: boolean; differentText: boolean } & (
  | {
      status: 'queued';
      participantId: string | null;
      turn: Promise<unknown>;
      /** False for a participant who is not active (paused): the message is kept, no reply comes. */
      answered: boolean;
    }
  | { status: 'unknown-sender' }
  | { status: 'unsupported' }
);

const holdsNul = (message: InboundMessage) =>
  message.text.includes(NUL) ||
  message.sender.includes(NUL) ||
  message.channelMessageId?.includes(NUL) === true ||
  message.contactId?.includes(NUL) === true;

/** A message as either store can keep it: U+0000 replaced (`replaceNul`), never refused, never lost. */
export function storable(message: InboundMessage): InboundMessage {
  if (!holdsNul(message)) return message;
  return {
    ...message,
    sender: replaceNul(message.sender),
    text: replaceNul(message.text),
    channelMessageId: message.channelMessageId === null ? null : replaceNul(message.channelMessageId),
    ...(message.contactId === undefined ? {} : { contactId: replaceNul(message.contactId) }),
  };
}
