import { NO_LIMITS, type ChannelCapabilities, type ChannelDirectory } from '../channels/channel.ts';
import type { IdGenerator } from '../core/clock.ts';
import type {
  Conversation,
  Message,
  MessageSource,
  NewMessage,
  NewOutboxItem,
  OutboxItem,
  Participant,
  Poll,
} from '../core/domain.ts';
import { firstNumbersOfBatch, pollForChannel } from '../core/poll-numbering.ts';
import { splitText } from '../core/split-text.ts';
import { awaitedLater } from '../core/awaited-later.ts';
import { replaceNul } from '../core/nul.ts';
import type { EngineTx } from '../store/store.ts';

export interface OutgoingDraft {
  /** Given when the id must be known before the commit (a streamed reply); generated otherwise. */
  id?: string;
  text: string;
  kind?: 'text' | 'poll';
  poll?: Poll | null;
  /** `assistant` messages are part of what the model reads; `system` ones (debug notes) are not. */
  role?: 'assistant' | 'system';
  source: MessageSource;
}

export interface OutgoingTarget {
  conversation: Conversation;
  participant: Participant | null;
}

/** A wire message: what one outbox row carries. */
/** When the messages are written, by which turn, and how they are claimed and numbered. */
export interface OutgoingContext {
  now: Date;
  turnId: string | null;
  /** Written claimed by this process until then (see `append`). */
  claimUntil?: Date;
  /** The caller numbers the messages after this seq (`appendMessages`' `numbered`). */
  numberedAfter?: number;
}

interface WirePart {
  kind: 'text' | 'poll';
  text: string;
  poll: Poll | null;
}

/**
 * Appends messages to the transcript and queues their delivery in the caller's transaction,
 * rendered for the conversation's channel (decision 003): a poll the channel cannot show becomes
 * numbered text, a text longer than it carries goes out in parts. The transcript keeps one
 * message; each part is an outbox row whose idempotency key derives from the message id.
 */
export class Outgoing {
  readonly #ids: IdGenerator;
  readonly #channels: ChannelDirectory;

  constructor(deps: { ids: IdGenerator; channels: ChannelDirectory }) {
    this.#ids = deps.ids;
    this.#channels = deps.channels;
  }

  /**
   * `transcriptOnly` messages (the person's own) are appended first, in the same statement, and
   * are not delivered. With `claimUntil`, the rows are written claimed by this process until then
   * when nothing of the conversation waits before them, and returned: the caller hands them to its
   * dispatcher after the commit (decision 009). Otherwise none are returned, and the dispatcher
   * claims them as usual. Also returns the messages appended (with their seqs), the person's first.
   */
  async append(
    tx: Pick<EngineTx, 'appendMessages' | 'enqueueOutbox'>,
    target: OutgoingTarget,
    drafts: OutgoingDraft[],
    context: OutgoingContext,
    transcriptOnly: NewMessage[] = [],
  ): Promise<{ messages: Message[]; claimed: OutboxItem[] }> {
    const { messages, claimed } = await this.issue(tx, target, drafts, context, transcriptOnly);
    return { messages, claimed: await claimed };
  }

  /**
   * `append`, for a unit of work that sends its commit before it reads any answer (decision 020):
   * with `context.numberedAfter` the messages are numbered here and nothing waits for the database;
   * the rows claimed are an answer to await after the commit (marked `awaitedLater`).
   */
  async issue(
    tx: Pick<EngineTx, 'appendMessages' | 'enqueueOutbox'>,
    target: OutgoingTarget,
    drafts: OutgoingDraft[],
    context: OutgoingContext,
    transcriptOnly: NewMessage[] = [],
  ): Promise<{ messages: Message[]; claimed: Promise<OutboxItem[]> }> {
    const numbered = context.numberedAfter === undefined ? undefined : { after: context.numberedAfter };
    if (drafts.length === 0)
      return { messages: await tx.appendMessages(transcriptOnly, numbered), claimed: Promise.resolve([]) };
    const { conversation, participant } = target;
    const firstNumbers = firstNumbersOfBatch(drafts.map((draft) => ({ poll: draft.poll ?? null })));
    const messages: NewMessage[] = drafts.map((draft, position) => ({
      id: draft.id ?? this.#ids.next('msg'),
      conversationId: conversation.id,
      role: draft.role ?? 'assistant',
      kind: draft.kind ?? 'text',
      text: replaceNul(draft.text), // a model's reply may hold U+0000, which PostgreSQL cannot store
      poll: draft.poll ? { ...draft.poll, firstNumber: firstNumbers[position]! } : null,
      source: draft.source,
      turnId: context.turnId,
      createdAt: context.now,
    }));
    // Both statements go out before either answer is awaited (one round trip on PostgreSQL).
    const appending = awaitedLater(tx.appendMessages([...transcriptOnly, ...messages], numbered));
    const capabilities = this.#channels.get(conversation.channel)?.capabilities ?? NO_LIMITS;
    const items: NewOutboxItem[] = [];
    for (const message of messages) {
      const parts = render(message, capabilities);
      parts.forEach((part, index) =>
        items.push({
          id: this.#ids.next('out'),
          conversationId: conversation.id,
          participantId: participant?.id ?? null,
          channel: conversation.channel,
          recipient: participant?.phoneNumber ?? conversation.id,
          ...part,
          idempotencyKey: parts.length === 1 ? message.id : `${message.id}#${index + 1}`,
          nextAttemptAt: context.now,
          createdAt: context.now,
        }),
      );
    }
    // Claimed for this process's dispatcher at once, unless an earlier message of the
    // conversation still waits to go out (it goes first: the claim keeps the order).
    const claimUntil = context.claimUntil;
    const claimed = awaitedLater(
      tx
        .enqueueOutbox(items, claimUntil ? { claimUntil } : {})
        .then((claimed) => (claimed ? items.map((item) => asPending({ ...item, nextAttemptAt: claimUntil! })) : [])),
    );
    return { messages: await appending, claimed };
  }
}

function asPending(item: NewOutboxItem): OutboxItem {
  return {
    ...item,
    status: 'pending',
    attempts: 0,
    lastError: null,
    sentAt: null,
    providerMessageId: null,
    deliveryStatus: null,
    deliveryStatusAt: null,
    deliveryError: null,
  };
}

/** Native when the channel has polls and the options are distinct, non-blank and within its limits (in characters). */
function fitsNatively(poll: Poll, capabilities: ChannelCapabilities): boolean {
  const limits = capabilities.polls;
  if (limits === null || poll.options.length > limits.maxOptions || poll.question.trim() === '') return false;
  const titles = poll.options.map((option) => option.trim());
  return (
    new Set(titles).size === titles.length &&
    titles.every((title) => title !== '' && [...title].length <= limits.maxOptionLength)
  );
}

export function render(
  message: Pick<Message, 'kind' | 'text' | 'poll'>,
  capabilities: ChannelCapabilities,
): WirePart[] {
  if (message.poll && fitsNatively(message.poll, capabilities))
    return [{ kind: 'poll', text: message.text, poll: message.poll }];
  const text = message.poll ? pollForChannel(message.poll, message.poll.firstNumber ?? 1) : message.text;
  return splitText(text, capabilities.maxTextLength).map((part) => ({ kind: 'text', text: part, poll: null }));
}
