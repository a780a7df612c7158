import type { RawBuilder } from 'kysely';
import type { QueryContext, SqlDialect } from './query-context.ts';
import type {
  ChannelContact,
  Conversation,
  DeliveryReceipt,
  InboxItem,
  InboxStatus,
  MemoryScope,
  Message,
  MessageEmbedding,
  NewMessage,
  NewOutboxItem,
  Note,
  OutboxItem,
  Participant,
  ParticipantStatus,
  SessionCaller,
  StoredEvent,
  ToolCallRecord,
  TurnRecord,
} from '../core/domain.ts';
import type { Profile } from '../core/profile.ts';
import type { Schedule } from '../core/schedule.ts';
import type { NewTimer, Timer } from '../core/timer.ts';

/**
 * The durable store. Two adapters (SQLite through `node:sqlite`, PostgreSQL through `pg`) share
 * one Kysely query layer and one contract test suite. Every method may be called on the store
 * itself (its own short transaction) or on the `StoreTx` handed to `transaction()`.
 */
/**
 * A flow's own turn reads folded into the statement that reads its turn's context (decision 020):
 * scalar subqueries (one value each, JSON for rows) of the participant's id, evaluated only for
 * conversations of that flow.
 */
export interface FlowContextRead {
  readonly flow: string;
  columns(dialect: SqlDialect, participantId: RawBuilder<unknown>): Record<string, RawBuilder<unknown>>;
}

/** What a turn starts from (`getTurnContext`). */
export interface TurnContext {
  conversation: Conversation;
  participant: Participant | null;
  /** Null when the caller knows it already: `knownThrough` is the conversation's last seq. */
  history: Message[] | null;
  /** The conversation's highest message seq (0 for none), system notes included: a turn numbers after it. */
  lastSeq: number;
  /** The values of the conversation's flow's `FlowContextRead` columns, by name, when it has one. */
  flowColumns?: Record<string, unknown>;
}

export interface StoreOperations {
  // Participants
  /** Throws `AppError('participant_exists')` when the phone number is taken. */
  insertParticipant(participant: Participant): Promise<void>;
  getParticipant(id: string): Promise<Participant | undefined>;
  /**
   * `getParticipant`, holding the row until the transaction ends (PostgreSQL `FOR NO KEY UPDATE`; SQLite's
   * transactions are exclusive already): a status change and a commit that depends on the status
   * cannot interleave.
   */
  lockParticipant(id: string): Promise<Participant | undefined>;
  /**
   * A fence (decision 020, `fence.ts`): holds the participant's row as `lockParticipant` does, and
   * fails the transaction with `FenceFailed('participant')` unless they are active. In a pipelined
   * PostgreSQL transaction it resolves once sent; the failure comes with the commit.
   */
  lockActiveParticipant(id: string): Promise<void>;
  findParticipantByPhone(phoneNumber: string): Promise<Participant | undefined>;
  /** Ordered by enrollment time, oldest first. */
  listParticipants(filter?: {
    status?: ParticipantStatus;
    cohort?: string;
    limit?: number;
    offset?: number;
  }): Promise<Participant[]>;
  /** How many `listParticipants` would list without a limit. */
  countParticipants(filter?: { status?: ParticipantStatus; cohort?: string }): Promise<number>;
  /** Returns the updated participant, or undefined when there is none with this id. */
  updateParticipant(
    id: string,
    patch: Partial<
      Pick<Participant, 'name' | 'gender' | 'ethnicity' | 'background' | 'timezone' | 'status' | 'cohort' | 'debug'>
    >,
    now: Date,
  ): Promise<Participant | undefined>;
  /**
   * Removes the participant and their personal data (decision 024): their conversations and the web
   * sessions started for them with everything in them, their contacts, notes and pre-enrolment
   * messages; a desk ticket, another session given their number or an opted-out contact keeps its
   * row without it. False when there was none.
   */
  deleteParticipant(id: string): Promise<boolean>;
  /**
   * The conversations `deleteParticipant` would delete now, in id order: their own and the web
   * sessions started for them. Empty when there is no such participant.
   */
  conversationsOfParticipant(id: string): Promise<string[]>;

  // Conversations
  /** `transcriptSearch` (default true): its messages feed the full-text index (`Flow.searchesTranscript`). */
  insertConversation(conversation: Conversation, options?: { transcriptSearch?: boolean }): Promise<void>;
  /** A conversation and its participant (null for a web session), in one read. */
  getConversationWithParticipant(
    conversationId: string,
  ): Promise<{ conversation: Conversation; participant: Participant | null } | undefined>;
  /**
   * What a turn starts from: the conversation, its participant and its last `historyLimit`
   * messages without system notes, oldest first, and the seq of its last message of any kind
   * (on PostgreSQL in one statement). With `knownThrough`, the last seq the caller knows the
   * history at: no history (null) when that is still the last seq, as the transcript only grows.
   */
  getTurnContext(
    conversationId: string,
    historyLimit: number,
    reads?: readonly FlowContextRead[],
    knownThrough?: number,
  ): Promise<TurnContext | undefined>;
  /** The participant with this phone number and their (oldest) conversation, in one read. */
  findSenderByPhone(
    phoneNumber: string,
  ): Promise<{ participant: Participant; conversation: Conversation | undefined } | undefined>;
  /**
   * `insertInbox(item)` if the phone number is still the sender the item was made for: the item's
   * participant, still active, and conversation (their oldest), a conversation of `expected.flow`,
   * on `expected.channel` when one is given. One statement when it is (on PostgreSQL the
   * acknowledgement's one round trip): then only `recorded`. Otherwise nothing new is written, and
   * the answer says who the number is now (`sender`), with the earlier record of a redelivery.
   */
  recordForSender(
    phoneNumber: string,
    item: InboxItem,
    expected: { flow: string; channel?: string },
  ): Promise<
    | { recorded: { item: InboxItem; duplicate: false; behind: boolean }; sender?: never }
    | {
        sender: { participant: Participant; conversation: Conversation | undefined } | undefined;
        recorded?: { item: InboxItem; duplicate: true };
      }
  >;
  getConversation(id: string): Promise<Conversation | undefined>;
  findConversationByParticipant(participantId: string): Promise<Conversation | undefined>;
  /** Who a web session is for (migration 014); undefined when nobody said. */
  getSessionCaller(conversationId: string): Promise<SessionCaller | undefined>;
  /** Sets the fields of `caller` that are given (`undefined` keeps the stored value). */
  saveSessionCaller(conversationId: string, caller: Partial<SessionCaller>, now: Date): Promise<void>;
  /**
   * Web sessions (conversations without a participant), newest first, each with the time of its
   * last message (its creation when it has none), and how many there are in all.
   */
  listSessions(filter: {
    flow?: string;
    limit: number;
    offset: number;
  }): Promise<{ sessions: Array<Conversation & { lastActivityAt: Date }>; total: number }>;
  /**
   * Writes `patch` and increments the version when the stored version is `expectedVersion`.
   * Returns the new row, or undefined when the version did not match (someone else wrote first).
   */
  updateConversation(
    id: string,
    expectedVersion: number,
    patch: Partial<Pick<Conversation, 'state' | 'subState' | 'participantId'>>,
    now: Date,
  ): Promise<Conversation | undefined>;
  /** `updateConversation` as a fence: another version fails the transaction (`FenceFailed('version')`). */
  updateConversationFenced(
    id: string,
    expectedVersion: number,
    patch: Partial<Pick<Conversation, 'state' | 'subState' | 'participantId'>>,
    now: Date,
  ): Promise<void>;
  /** Where replies go; not flow state, so it neither checks nor bumps the version. */
  setConversationChannel(id: string, channel: string, now: Date): Promise<void>;

  // Messages (append-only)
  /**
   * Appends in order, giving each the next `seq` of its conversation. Returns them with seqs.
   * `numbered.after`: the caller numbers them after that seq (the last it read), which needs no
   * answer from the database; a seq taken meanwhile fails the transaction with
   * `FenceFailed('transcript')` (decision 020).
   */
  appendMessages(messages: NewMessage[], numbered?: { after: number }): Promise<Message[]>;
  /** The last `limit` messages in transcript order (all of them when limit is undefined). */
  /** The last `limit` messages (all without one), oldest first; with `afterSeq`, only those after it. */
  /** The last `limit` messages in order; `withoutSystem` leaves out system notes (debug, operator) before counting. */
  listMessages(
    conversationId: string,
    options?: { limit?: number; afterSeq?: number; withoutSystem?: boolean },
  ): Promise<Message[]>;

  // Profiles
  getProfile(participantId: string): Promise<Profile | undefined>;
  saveProfile(profile: Profile): Promise<void>;

  // Schedules (habit prompts)
  /** Active schedules of a participant, oldest first. */
  listSchedules(participantId: string): Promise<Schedule[]>;
  insertSchedule(schedule: Schedule): Promise<void>;
  /** False when there was no such schedule. */
  deleteSchedule(id: string): Promise<boolean>;
  /** Re-reads the schedule's times in another zone (the participant moved). */
  setScheduleTimezone(id: string, timezone: string): Promise<void>;

  // Timers
  /**
   * Writes a pending timer. A pending timer with the same `dedupKey` is replaced (cancelled);
   * running, done and failed ones never block the key.
   */
  scheduleTimer(timer: NewTimer): Promise<void>;
  /** Cancels the pending timer with this key, if any. True when one was cancelled. */
  cancelTimer(dedupKey: string, at: Date): Promise<boolean>;
  /** `cancelTimer` for several keys in one statement. Returns how many were cancelled. */
  cancelTimers(dedupKeys: readonly string[], at: Date): Promise<number>;
  /** Pending timers of a participant, by due time. */
  listPendingTimers(participantId: string): Promise<Timer[]>;
  getTimer(id: string): Promise<Timer | undefined>;
  /**
   * Claims up to `limit` timers that are due at `now`, oldest due first: pending ones, and
   * running ones whose lease expired (their process died). Claimed rows become `running` with
   * `leaseUntil` and `attempts + 1`. Concurrent claimers never get the same row
   * (PostgreSQL: `FOR UPDATE SKIP LOCKED`).
   */
  claimDueTimers(now: Date, limit: number, leaseUntil: Date): Promise<Timer[]>;
  /** The earliest due time of a pending timer, or of a running one's lease expiry; null when none. */
  nextTimerDue(): Promise<Date | null>;
  /**
   * Pushes a running timer's lease to `until` while its handler works; false when the claim is no
   * longer this attempt's (it finished, or another process took it over).
   */
  extendTimerLease(id: string, attempts: number, until: Date): Promise<boolean>;
  /** Marks a claimed timer done. */
  /** False when the timer was not running (already done, cancelled, or claimed again elsewhere). */
  completeTimer(id: string, at: Date): Promise<boolean>;
  /** Records a failed attempt: back to pending at `retryAt`, or `failed` for good when null. */
  failTimer(id: string, error: string, retryAt: Date | null): Promise<void>;
  /** Cancels every pending timer of a participant (pause, withdraw, delete). Returns how many. */
  cancelTimersOf(participantId: string, at: Date): Promise<number>;

  // Inbox
  /**
   * Records an inbound message. When the same `(channel, sender, channelMessageId)` was recorded
   * before, nothing is written and the earlier item is returned with `duplicate: true`. Message
   * ids are per sender: another sender's same id is a new message.
   */
  /** `behind` (a new item): an earlier item of its conversation was still pending when it was written. */
  insertInbox(item: InboxItem): Promise<{ item: InboxItem; duplicate: boolean; behind?: boolean }>;
  getInbox(id: string): Promise<InboxItem | undefined>;
  /** Pending items in arrival order: what a restart must still process. */
  listPendingInbox(limit?: number): Promise<InboxItem[]>;
  setInboxStatus(id: string, status: InboxStatus, at: Date, error?: string | null): Promise<void>;
  /** Pending items of one conversation in arrival order: what its lease holder works through. */
  listPendingInboxOf(conversationId: string, limit: number): Promise<InboxItem[]>;
  /**
   * The earliest item from `sender` on `channel` recorded with no participant, received at or
   * after `since` (arrival order).
   */
  firstInboxFrom(channel: string, sender: string, since: Date): Promise<InboxItem | undefined>;
  /**
   * Moves a pending item to a final status; false (nothing written) when it was not pending any
   * more, because another process got there first.
   */
  completeInbox(id: string, status: Exclude<InboxStatus, 'pending'>, at: Date, error?: string | null): Promise<boolean>;
  /** `completeInbox` as a fence: an item no longer pending fails the transaction (`FenceFailed('inbox')`). */
  completeInboxFenced(id: string, status: Exclude<InboxStatus, 'pending'>, at: Date): Promise<void>;

  // Outbox
  /** True when the conversation has an outbox row not yet sent or failed. */
  hasPendingOutbox(conversationId: string): Promise<boolean>;
  /** Makes claimed rows claimable again now (a sender that will not send them after all). */
  releaseOutbox(ids: readonly string[], at: Date): Promise<void>;
  /**
   * Queues rows. With `claimUntil` (rows of one conversation): written claimed by the caller until
   * then, unless the conversation already has a row waiting (theirs go after it, as claimed later);
   * true when they were claimed (decision 009).
   */
  enqueueOutbox(items: NewOutboxItem[], options?: { claimUntil?: Date }): Promise<boolean>;
  getOutbox(id: string): Promise<OutboxItem | undefined>;
  /** Pending items due at `now`, oldest first. */
  listDueOutbox(now: Date, limit: number): Promise<OutboxItem[]>;
  /**
   * Claims up to `limit` due items for delivery: at most one per conversation, its oldest
   * pending one (so messages leave in order whichever process sends them), each hidden from
   * other claimers until `leaseUntil` (it becomes due again then, if its sender died).
   * Concurrent claimers never get the same item (PostgreSQL: `FOR UPDATE SKIP LOCKED`).
   */
  claimDueOutbox(now: Date, limit: number, leaseUntil: Date): Promise<OutboxItem[]>;
  /**
   * Marks an item accepted by its channel. With the provider's message id, receipts that arrived
   * before it (the send's answer raced the status webhook) are applied now.
   */
  markOutboxSent(id: string, at: Date, attempts: number, providerMessageId?: string | null): Promise<void>;
  /** `markOutboxSent` for several items; those without a provider id in one statement (decision 020). */
  markOutboxSentMany(marks: readonly SentMark[]): Promise<void>;
  /**
   * Records a provider's receipt once (`duplicate` when this status of this message was seen) and
   * raises the outbox item's delivery status if it ranks higher. `outboxId` is null while no sent
   * item carries the provider id yet.
   */
  recordDeliveryReceipt(receipt: DeliveryReceipt): Promise<{ duplicate: boolean; outboxId: string | null }>;
  /** Records a failed attempt: either retry at `nextAttemptAt` or give up (`failed`). */
  markOutboxAttemptFailed(
    id: string,
    outcome: { attempts: number; error: string; nextAttemptAt: Date | null },
  ): Promise<void>;
  listOutbox(conversationId: string): Promise<OutboxItem[]>;

  // Channel contacts
  /**
   * Creates or updates a contact on an inbound message: links the participant and phone when
   * given, and moves `lastInboundAt` forward (never back: webhooks arrive out of order).
   */
  recordContactInbound(
    contact: { channel: string; contactId: string; participantId: string | null; phoneNumber: string | null },
    at: Date,
  ): Promise<ChannelContact>;
  getContact(channel: string, contactId: string): Promise<ChannelContact | undefined>;
  /** The participant's contact on a channel that wrote last, if any. */
  findContactOfParticipant(channel: string, participantId: string): Promise<ChannelContact | undefined>;
  /** Records an opt-out (`at`) or opt-in (null), creating the contact when needed. */
  setContactOptOut(channel: string, contactId: string, at: Date | null, now: Date): Promise<ChannelContact>;

  // Transcript search, the assistant's notes and message embeddings (decision 006)
  /**
   * The user and assistant messages in `scope` (a person's conversations, or one conversation,
   * only those that search their transcript) matching any word of `keywords` (full text,
   * stemmed), within `from`..`to` when given (applied before `limit`), best matches first.
   */
  searchMessages(
    scope: MemoryScope,
    search: { keywords: string[]; from?: Date; to?: Date; limit: number },
  ): Promise<Message[]>;
  /** The notes of the scope's person (of the conversation when nobody is known), oldest first. */
  listNotes(scope: MemoryScope): Promise<Note[]>;
  addNote(note: Note): Promise<void>;
  /** False when the scope has no such note. */
  deleteNote(scope: MemoryScope, noteId: string): Promise<boolean>;
  /** Messages in `scope` (as `searchMessages` reads it) that `model` has not embedded yet, newest first. */
  messagesWithoutEmbedding(scope: MemoryScope, model: string, limit: number): Promise<Message[]>;
  /** Keeps embeddings by `model`; one already kept for a message is left as it is. */
  saveEmbeddings(model: string, embeddings: MessageEmbedding[], now: Date): Promise<void>;
  /** The embedded messages in `scope` within `from`..`to`, newest first, at most `limit`, with their vectors. */
  listEmbeddings(
    scope: MemoryScope,
    model: string,
    search: { from?: Date; to?: Date; limit: number },
  ): Promise<Array<{ message: Message; vector: Float32Array }>>;

  // A flow's working state per conversation (JSON the flow validates)
  getFlowState(conversationId: string): Promise<unknown>;
  saveFlowState(conversationId: string, data: unknown, now: Date): Promise<void>;

  // Conversation leases (decision 004)
  /**
   * Takes or renews the conversation's lease for `owner` until `until`: true when the lease was
   * free, expired at `now`, or already `owner`'s; false when another owner holds it.
   */
  acquireLease(conversationId: string, owner: string, now: Date, until: Date): Promise<boolean>;
  /**
   * Extends `owner`'s lease to `until` if the row is still theirs: false when it is gone or
   * another's, as after a lapse in which another owner took it (and perhaps let it go again).
   */
  renewLease(conversationId: string, owner: string, until: Date): Promise<boolean>;
  /** Lets go of the lease if `owner` holds it. */
  releaseLease(conversationId: string, owner: string): Promise<void>;
  /** Drops every lease (a single-process store at start: whoever held them is gone). */
  clearLeases(): Promise<number>;

  // The virtual clock (CLOCK=virtual), kept so a restart resumes from it
  /** The last virtual time saved, or undefined when none was. */
  getVirtualClock(): Promise<Date | undefined>;
  /** Saves the virtual time; an earlier time than the one saved changes nothing. */
  saveVirtualClock(at: Date): Promise<void>;

  // Turns and the tool-call audit log
  /** A turn record and its tool calls' audit, in one row (the calls must be the turn's own). */
  insertTurn(turn: TurnRecord, calls?: ToolCallRecord[]): Promise<void>;
  listTurns(conversationId: string, options?: { limit?: number }): Promise<TurnRecord[]>;
  /** Tool calls committed before their turn's record is (the service desk's confirmed changes). */
  insertToolCalls(calls: ToolCallRecord[]): Promise<void>;
  /** In execution order: both kinds above; with `turnIds`, only those turns' calls. */
  listToolCalls(conversationId: string, options?: { turnIds?: readonly string[] }): Promise<ToolCallRecord[]>;

  // The session event log (the caller assigns gapless seqs; a seq taken twice is an error)
  /**
   * Writes each run of consecutive seqs as one page (migration 022). A seq already taken fails
   * with `FenceFailed('events')` and writes nothing.
   */
  appendEvents(events: StoredEvent[]): Promise<void>;
  /** Events with seq > `afterSeq` (default 0), ascending, at most `limit`. */
  listEvents(conversationId: string, options?: { afterSeq?: number; limit?: number }): Promise<StoredEvent[]>;
  /** The first and last stored seq, or undefined when the log is empty. */
  /** `lastMessageSeq`: the transcript seq the newest `final` event announced (null when none did). */
  eventRange(
    conversationId: string,
  ): Promise<{ first: number; last: number; lastTurnNo: number | null; lastMessageSeq: number | null } | undefined>;
  /**
   * `owner` (a process) follows these conversations' session events until `until` (decision 020):
   * other processes' commits tell it when they write some. On PostgreSQL each conversation's row
   * is locked `FOR SHARE` first, so a turn commit that holds it finishes before (the follower
   * reads its events afterwards) and one that locks it after sees the follower. Conversations
   * that do not exist are skipped.
   */
  followEvents(conversationIds: readonly string[], owner: string, until: Date): Promise<void>;
  unfollowEvents(conversationId: string, owner: string): Promise<void>;
  /** True when a process other than `owner` follows the conversation's events at `now`. */
  followedElsewhere(conversationId: string, owner: string, now: Date): Promise<boolean>;
  /** What waits right now: pending inbox and outbox rows, timers past due, and the oldest of each. */
  backlog(now: Date): Promise<{
    inboxPending: number;
    oldestInboxAt: Date | null;
    outboxPending: number;
    oldestOutboxAt: Date | null;
    timersOverdue: number;
    oldestOverdueTimerAt: Date | null;
  }>;
  /** Deletes the events with seq < `beforeSeq`; returns how many went. */
  pruneEvents(conversationId: string, beforeSeq: number): Promise<number>;
}

export type StoreTx = StoreOperations;

/**
 * Transactions that hand their work `Tx`: the whole `StoreTx` on the `Store`, a narrower view on
 * the engine's port (`EnginePort<Tx>`). Any `Tx` that `StoreTx` satisfies is a view of the same
 * transaction.
 */
export interface Transactions<Tx> {
  /**
   * Runs `work` in one transaction (SQLite: `BEGIN IMMEDIATE`), committing when it resolves and
   * rolling back when it throws. Transactions on one store never interleave their writes.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * A write that needs no transaction of its own (one statement), committed with others when that
   * helps (decision 020): on SQLite with `gather`, in the writer's group with whatever else this
   * round of the event loop commits; otherwise at once, in autocommit (on PostgreSQL a transaction
   * would only add round trips). Resolves once committed.
   */
  batched<T>(work: (ops: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
}

export interface Store extends StoreOperations, Transactions<StoreTx> {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * A flow module's own queries (its tables) bound to this store, and to each transaction next
   * to the engine's operations (decision 019): the port stays the engine's, a module owns its
   * extension.
   */
  extend<E>(queries: (ctx: QueryContext) => E): StoreExtension<E>;
  /** A cheap round trip, for `/health`. */
  ping(): Promise<void>;
  /** The database server's clock (PostgreSQL), or the local clock (SQLite). */
  databaseNow(): Promise<Date>;
  close(): Promise<void>;
}

/** A module's queries on the store (`ops`), and transactions that see them and the engine's. */
export interface StoreExtension<E> {
  readonly ops: E;
  transaction<T>(work: (tx: StoreTx, ext: E) => Promise<T>): Promise<T>;
}

/** A send to record: the outbox item, when it was accepted, its attempt, the provider's id for it. */
export interface SentMark {
  id: string;
  at: Date;
  attempts: number;
  providerMessageId: string | null;
}

export interface TransactionOptions {
  /**
   * Other work is under way (the engine runs other turns): the transaction may wait for the event
   * loop to come round so that transactions asked for in the same round commit with it (SQLite
   * group commit, decision 020). Without it a transaction starts at once when nothing else runs.
   */
  gather?: boolean;
}

/**
 * What a flow may read while it prepares a turn (`TurnRequest.store`, decision 019): its own
 * state, the person and their plan, the transcript and the person's memory. Nothing of the
 * engine's queues; writes go through `PreparedTurn.commit(tx)`.
 */
export type FlowReads = Pick<
  StoreOperations,
  | 'getFlowState'
  | 'getSessionCaller'
  | 'getParticipant'
  | 'getConversation'
  | 'findConversationByParticipant'
  | 'getProfile'
  | 'listSchedules'
  | 'listPendingTimers'
  | 'listMessages'
  | 'searchMessages'
  | 'listNotes'
  | 'listEmbeddings'
  | 'messagesWithoutEmbedding'
>;

/**
 * What a flow writes in its turn's transaction (and in the engine's hooks that run in one: a
 * forced sub-state, a resumed or moved participant): its state, the person's plan and memory,
 * its timers, its own audit entries. The engine writes the rest of the turn.
 */
export type FlowWrites = FlowReads &
  Pick<
    StoreOperations,
    | 'saveFlowState'
    | 'saveProfile'
    | 'insertSchedule'
    | 'deleteSchedule'
    | 'setScheduleTimezone'
    | 'scheduleTimer'
    | 'cancelTimer'
    | 'cancelTimers'
    | 'addNote'
    | 'deleteNote'
    | 'saveEmbeddings'
    | 'insertToolCalls'
    | 'updateConversation'
  >;

/**
 * The flows' own data (decision 019): a person's profile and schedules, the assistant's notes, the
 * transcript's search index and embeddings, a flow's working state. The engine never reads or
 * writes them itself; a flow does, through `FlowReads` and `FlowWrites`.
 */
export type FlowDataOperation =
  | 'getProfile'
  | 'saveProfile'
  | 'listSchedules'
  | 'insertSchedule'
  | 'deleteSchedule'
  | 'setScheduleTimezone'
  | SearchOperation
  | 'getFlowState'
  | 'saveFlowState';

/** Transcript search, the assistant's notes and the embeddings (`search-queries.ts`). */
export type SearchOperation =
  | 'searchMessages'
  | 'listNotes'
  | 'addNote'
  | 'deleteNote'
  | 'messagesWithoutEmbedding'
  | 'saveEmbeddings'
  | 'listEmbeddings';

/**
 * The engine's operations (decision 019), on the store or in a transaction: participants,
 * conversations and their context reads, messages, the inbox, the outbox, timers, contacts,
 * turns, events, leases. Everything but the flows' data.
 */
export type EngineTx = Omit<StoreOperations, FlowDataOperation>;

/**
 * The narrow engine port (decision 019): the engine's operations and transactions. A consumer
 * whose transactions run a flow's `commit(tx)` or hooks asks for `EnginePort<… & FlowWrites>`:
 * the flow's writes go in the engine's unit of work, the engine itself never touches them.
 */
export type EnginePort<Tx = EngineTx> = EngineTx & Transactions<Tx>;
