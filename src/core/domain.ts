/** The records the engine works with. Rows are mapped to these at the store's edge. */

export const PARTICIPANT_STATUSES = ['active', 'paused', 'completed', 'withdrawn'] as const;
export type ParticipantStatus = (typeof PARTICIPANT_STATUSES)[number];

export interface Participant {
  id: string;
  /** E.164 with a leading `+`, unique. */
  phoneNumber: string;
  name: string | null;
  gender: string | null;
  ethnicity: string | null;
  background: string | null;
  /** A valid IANA zone, or null when enrollment gave none. */
  timezone: string | null;
  status: ParticipantStatus;
  /** The study group (an arm, a site), free text; null when none was given. */
  cohort: string | null;
  /** Per-participant debug mode: extra diagnostic messages to the participant. */
  debug: boolean;
  enrolledAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export interface Conversation {
  id: string;
  /** Null for a web chat session not (yet) linked to a participant. */
  participantId: string | null;
  /** The channel replies leave through: `webhook`, `whatsapp`, `twilio`, `web`. */
  channel: string;
  /** Which flow owns the conversation: `habit-coach`, `service-desk`, `assistant`. */
  flow: string;
  /** Top-level state (`CONVERSATION_ACTIVE` for habit coaching). */
  state: string;
  /** The module the next turn routes to (`INTAKE`, `FEEDBACK`), or null for the flow's default. */
  subState: string | null;
  /** Optimistic-concurrency guard, incremented on every write of the row. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export type MessageRole = 'user' | 'assistant' | 'system';
export type MessageKind = 'text' | 'poll';
/**
 * What produced a message. `timer` is the flow's own timers (the habit coach's daily prompts,
 * reminders, nudges); `schedule` a `POST /schedule` series, which the study does not count as
 * daily prompts.
 */
export type MessageSource = 'participant' | 'model' | 'timer' | 'schedule' | 'operator' | 'system';

export interface Poll {
  question: string;
  options: string[];
  /**
   * The number of its first option in the shared numbering (core/poll-numbering), fixed when the
   * poll was queued; absent on polls stored before it was recorded.
   */
  firstNumber?: number;
}

export interface Message {
  id: string;
  conversationId: string;
  /** Position in the conversation's transcript, from 1, gapless. */
  seq: number;
  role: MessageRole;
  kind: MessageKind;
  text: string;
  poll: Poll | null;
  source: MessageSource;
  turnId: string | null;
  createdAt: Date;
}

export type NewMessage = Omit<Message, 'seq'>;

export type InboxStatus = 'pending' | 'processed' | 'failed' | 'ignored';

export interface InboxItem {
  id: string;
  channel: string;
  /** The channel's own message id, used for deduplication; null when the channel gave none. */
  channelMessageId: string | null;
  sender: string;
  text: string;
  participantId: string | null;
  conversationId: string | null;
  status: InboxStatus;
  error: string | null;
  receivedAt: Date;
  processedAt: Date | null;
  /**
   * The W3C `traceparent` of the request that brought it (tracing on): the turn that answers it
   * continues that trace in whichever process runs it, and after a restart.
   */
  traceParent?: string | null;
}

export type OutboxStatus = 'pending' | 'sent' | 'failed';

export interface OutboxItem {
  id: string;
  conversationId: string;
  participantId: string | null;
  channel: string;
  /** The recipient's address on the channel (a phone number for SMS and WhatsApp). */
  recipient: string;
  kind: MessageKind;
  text: string;
  poll: Poll | null;
  /** Sent with every delivery attempt so a channel can drop duplicates. */
  idempotencyKey: string;
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
  /** The provider's id of the sent message (wamid, MessageSid), which its receipts carry. */
  providerMessageId: string | null;
  /** The furthest the provider reported it got; null until a receipt arrives. */
  deliveryStatus: DeliveryStatus | null;
  deliveryStatusAt: Date | null;
  /** The provider's reason when it reported the message failed. */
  deliveryError: string | null;
}

export type NewOutboxItem = Omit<
  OutboxItem,
  | 'status'
  | 'attempts'
  | 'lastError'
  | 'sentAt'
  | 'providerMessageId'
  | 'deliveryStatus'
  | 'deliveryStatusAt'
  | 'deliveryError'
>;

/** In rank order: a receipt never moves a message back down (providers report out of order). */
export const DELIVERY_STATUSES = ['sent', 'failed', 'delivered', 'read'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A provider's report on a message we sent (a status webhook or callback). */
export interface DeliveryReceipt {
  channel: string;
  providerMessageId: string;
  status: DeliveryStatus;
  at: Date;
  error: string | null;
}

/** A person's identity on one channel and what the channel must remember about them. */
export interface ChannelContact {
  channel: string;
  /** WhatsApp: the business-scoped user id when the webhook carries one, else `wa_id`; SMS: E.164. */
  contactId: string;
  participantId: string | null;
  /** E.164, when the channel told us. */
  phoneNumber: string | null;
  /** When they last wrote to us (the WhatsApp 24-hour window). */
  lastInboundAt: Date | null;
  /** When they opted out (SMS STOP); null when they may be messaged. */
  optedOutAt: Date | null;
  updatedAt: Date;
}

/** `cancelled`: interrupted by the participant (barge-in); the message is kept, no reply. */
export type TurnStatus = 'completed' | 'failed' | 'cancelled';

export interface TurnRecord {
  id: string;
  conversationId: string;
  /** The inbox item the turn answered, or null for a greeting or timer-driven turn. */
  inboxId: string | null;
  /** What started the turn: `message`, `greeting`, `timer`. */
  trigger: string;
  /** The module that handled the turn (`INTAKE`, `FEEDBACK`, ...). */
  module: string;
  status: TurnStatus;
  modelCalls: number;
  toolRounds: number;
  modelMs: number;
  toolMs: number;
  totalMs: number;
  /** From the turn's start to the first streamed token / first status event; null when none came. */
  firstTokenMs: number | null;
  timeToStatusMs: number | null;
  error: string | null;
  startedAt: Date;
  finishedAt: Date;
  /** The OpenTelemetry trace the turn ran in (32 hex digits); null or absent when tracing is off. */
  traceId?: string | null;
  /** How many times the turn ran, this one included: more than 1 after a failure it was retried for. */
  attempts: number;
}

export type ToolCallStatus = 'ok' | 'error';

export interface ToolCallRecord {
  id: string;
  turnId: string;
  conversationId: string;
  round: number;
  name: string;
  /** The arguments as the model sent them (JSON text, possibly malformed). */
  arguments: string;
  /** The text given back to the model. */
  result: string;
  status: ToolCallStatus;
  durationMs: number;
  createdAt: Date;
}

/**
 * One event of a conversation's session stream as stored: `seq` is gapless per conversation,
 * `payload` is the rest of the wire event (validated by `src/events` on the way in and out).
 */
export interface StoredEvent {
  conversationId: string;
  seq: number;
  /** The per-conversation turn number the event belongs to, or null (timer sends, resync). */
  turnNo: number | null;
  type: string;
  payload: Record<string, unknown>;
  at: Date;
}

/**
 * Who a web session (a conversation without a participant) is for: the phone the caller gave, and
 * the person whose memory it shares (`p_…` a participant's id, `id:…` a key of the operator's,
 * `tel:+…` a phone nobody is enrolled with). Either may be unknown.
 */
export interface SessionCaller {
  phone: string | null;
  person: string | null;
}

/**
 * Whose memory a recall or a note belongs to: the person's, across their conversations (a
 * participant's id, or a web session's `SessionCaller.person`), or, when nobody is known, the
 * one conversation's.
 */
export interface MemoryScope {
  conversationId: string;
  person: string | null;
}

/** A note the assistant keeps for a person (its notes tool); `conversationId` is where it was written. */
export interface Note {
  id: string;
  conversationId: string;
  /** Whose note it is; null for a session nobody is known for (then it is that conversation's). */
  person: string | null;
  text: string;
  createdAt: Date;
}

/** A message's embedding by one model, for semantic recall. */
export interface MessageEmbedding {
  conversationId: string;
  seq: number;
  vector: Float32Array;
}
