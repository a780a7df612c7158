import type { IdGenerator } from '../core/clock.ts';
import type {
  Conversation,
  Message,
  NewMessage,
  OutboxItem,
  Participant,
  ToolCallRecord,
  TurnRecord,
} from '../core/domain.ts';
import { awaitedLater } from '../core/awaited-later.ts';
import { AppError } from '../core/errors.ts';
import type { SentMark } from '../store/store.ts';
import { FenceFailed } from '../store/fence.ts';
import { answeredMessages, type ExtraMessage, type PreparedTurn, type TurnInput, type TurnOutcome } from './flow.ts';
import type { AnnounceEvents, TurnBroadcast } from './turn-broadcast.ts';
import type { OutgoingDraft } from './outgoing.ts';
import type { TurnRunnerDeps, TurnTx } from './turn-runner.ts';

export type TurnCommitDeps = Pick<
  TurnRunnerDeps,
  'store' | 'clock' | 'ids' | 'outgoing' | 'deliveries' | 'othersWorking' | 'eventFollowers'
>;

/** A turn that ran: what its one commit writes. */
export interface FinishedTurn {
  conversation: Conversation;
  participant: Participant | null;
  /** The transcript's last seq as the turn read it: its messages are numbered after it if still free. */
  lastSeq: number;
  input: TurnInput;
  turnId: string;
  /** The reply to store under `id`; null when the turn sends none (interrupted). */
  reply: { id: string; text: string | null };
  prepared: PreparedTurn;
  outcome: TurnOutcome;
  /** The turn's record and its tool calls, finished at `now` (the commit's time). */
  records: (now: Date) => { turn: TurnRecord; calls: ToolCallRecord[] };
}

export interface CommittedTurn {
  /** False: the participant was paused while the turn ran, and only their message was kept. */
  committed: boolean;
  /** The turn's session events went into its commit. */
  announced: boolean;
  /** The messages the commit appended, numbered. */
  messages: Message[];
  /** The replies the commit claimed for this process's dispatcher. */
  claimed: Promise<OutboxItem[]>;
}

/**
 * A turn's writes as one unit of work (decision 020): the transcript, the flow's own writes, the
 * conversation's state, the turn record, the inbox items it answers, its session events and the
 * earlier replies' `sent` marks. Nothing in it waits for an answer, so on PostgreSQL it and its
 * COMMIT go out in one flight. Its fences (the participant still active, the conversation's
 * version, each inbox item still pending, the seqs its messages are numbered with still free)
 * fail on the server, and one that fails undoes the whole unit.
 */
export class TurnCommit {
  readonly #deps: TurnCommitDeps;

  constructor(deps: TurnCommitDeps) {
    this.#deps = deps;
  }

  /** Commits the turn; its events too when `broadcast` is given (they reach live listeners once committed). */
  async commit(turn: FinishedTurn, broadcast: TurnBroadcast | undefined): Promise<CommittedTurn> {
    const { store, clock, deliveries } = this.#deps;
    const unit = new TurnUnit(this.#deps, turn);
    const commitWork = (announce?: AnnounceEvents) =>
      unit
        .write(announce, turn.lastSeq)
        .catch((error: unknown) => {
          if (!(error instanceof FenceFailed && error.fence === 'transcript')) throw error;
          // Something else was appended to the conversation meanwhile: the database numbers them.
          unit.undo();
          return unit.write(announce, undefined);
        })
        .catch(async (error: unknown) => {
          if (!(error instanceof FenceFailed && error.fence === 'participant'))
            throw fenceError(error, turn.conversation);
          // Paused (or withdrawn) while the model ran: nothing the turn did is kept but the
          // message, as for a message that arrives while paused.
          unit.undo();
          await store.transaction((tx) => this.keepMessageOnly(tx, turn.conversation, turn.input, clock.now()));
          return false;
        });
    const committed = await (broadcast ? broadcast.commit(commitWork, () => unit.followedElsewhere) : commitWork())
      // Failed, the unit's marks go with the next commit.
      .catch((error: unknown) => {
        unit.undo();
        throw error;
      });
    deliveries?.marksWritten(unit.marks);
    return { committed, announced: unit.announced, messages: unit.messages, claimed: unit.claimed };
  }

  /** The message of a turn that is not answered (its participant inactive) is kept in the transcript. */
  async keepMessageOnly(tx: TurnTx, conversation: Conversation, input: TurnInput, now: Date): Promise<void> {
    if (input.kind !== 'message') return;
    const messages = answeredMessages(input);
    await tx.appendMessages(
      messages.map((message) => userMessage(this.#deps.ids, conversation.id, message.text, null, now)),
    );
    for (const { inboxId } of messages) await completeOnce(tx, inboxId, 'ignored', now);
  }
}

/** A participant's message as the transcript keeps it. */
export function userMessage(
  ids: IdGenerator,
  conversationId: string,
  text: string,
  turnId: string | null,
  now: Date,
): NewMessage {
  return {
    id: ids.next('msg'),
    conversationId,
    role: 'user',
    kind: 'text',
    text,
    poll: null,
    source: 'participant',
    turnId,
    createdAt: now,
  };
}

/** One turn's unit of work, written once or, after a fence, again; what the last write left. */
class TurnUnit {
  readonly #deps: TurnCommitDeps;
  readonly #turn: FinishedTurn;
  /** The followers' question of the last write, answered with its commit. */
  #followers: Promise<boolean> | undefined;
  marks: SentMark[] = [];
  messages: Message[] = [];
  claimed: Promise<OutboxItem[]> = Promise.resolve([]);
  announced = false;
  /** Whether another process follows the conversation's events, as the last write found. */
  followedElsewhere: boolean | undefined;

  constructor(deps: TurnCommitDeps, turn: FinishedTurn) {
    this.#deps = deps;
    this.#turn = turn;
  }

  /** The marks this unit took go back to the dispatcher, for the next commit to write. */
  undo(): void {
    this.#deps.deliveries?.restoreMarks(this.marks);
    this.marks = [];
  }

  async write(announce: AnnounceEvents | undefined, numberedAfter: number | undefined): Promise<boolean> {
    const { store, othersWorking } = this.#deps;
    this.#followers = undefined;
    const done = await store.transaction(
      async (tx) => {
        await this.#writeAll(tx, announce, numberedAfter);
        return true;
      },
      { gather: othersWorking?.() === true },
    );
    // Answered with the commit (no round trip of its own).
    this.followedElsewhere = await this.#followers;
    return done;
  }

  /** The unit's statements, sent without waiting for their answers but where one needs another's. */
  async #writeAll(tx: TurnTx, announce: AnnounceEvents | undefined, numberedAfter: number | undefined): Promise<void> {
    const { clock, deliveries } = this.#deps;
    const { conversation, participant, input, prepared, outcome } = this.#turn;
    const now = clock.now();
    // Earlier sends' "sent" marks ride along (decision 020): no commit of their own.
    this.marks = deliveries?.takeMarks() ?? [];
    if (this.marks.length > 0) await tx.markOutboxSentMany(this.marks);
    const locked = participant ? awaitedLater(tx.lockActiveParticipant(participant.id)) : undefined;
    const appending = awaitedLater(this.#appendTranscript(tx, now, numberedAfter));
    await prepared.commit(tx);
    const patch = outcome.conversationPatch;
    const patching =
      patch && (patch.state !== undefined || patch.subState !== undefined)
        ? awaitedLater(tx.updateConversationFenced(conversation.id, conversation.version, patch, now))
        : undefined;
    const { turn, calls } = this.#turn.records(now);
    await tx.insertTurn(turn, calls);
    const completing =
      input.kind === 'message'
        ? answeredMessages(input).map(({ inboxId }) => awaitedLater(tx.completeInboxFenced(inboxId, 'processed', now)))
        : [];
    const [, appended] = await Promise.all([locked, appending, patching, ...completing]);
    this.claimed = appended.claimed;
    this.messages = appended.messages;
    if (!announce) return;
    // Asked after the conversation's row lock (which appending messages takes first), so a
    // process that starts following meanwhile is either seen here or reads these events.
    if (appended.messages.length > 0) this.#followers = this.#followedElsewhere(tx);
    await tx.appendEvents(announce(appended.messages));
    this.announced = true;
  }

  #followedElsewhere(tx: TurnTx): Promise<boolean> | undefined {
    const followers = this.#deps.eventFollowers;
    return (
      followers && awaitedLater(tx.followedElsewhere(this.#turn.conversation.id, followers.owner, followers.now()))
    );
  }

  #appendTranscript(
    tx: TurnTx,
    now: Date,
    numberedAfter: number | undefined,
  ): Promise<{ messages: Message[]; claimed: Promise<OutboxItem[]> }> {
    const { conversation, participant, input, turnId, reply, outcome } = this.#turn;
    // Each message of a batch stays its own message in the transcript.
    const own =
      input.kind === 'message'
        ? answeredMessages(input).map((message) =>
            userMessage(this.#deps.ids, conversation.id, message.text, turnId, now),
          )
        : [];
    const drafts: OutgoingDraft[] = [
      ...(reply.text === null ? [] : [{ id: reply.id, text: reply.text, source: 'model' as const }]),
      ...(outcome.extraMessages ?? []).map((extra: ExtraMessage): OutgoingDraft => ({
        ...extra,
        role: extra.visibleToModel ? 'assistant' : 'system',
        source: 'system',
      })),
    ];
    const { outgoing, deliveries } = this.#deps;
    const claimUntil = deliveries?.claimUntil(now);
    return outgoing.issue(tx, { conversation, participant }, drafts, { now, turnId, claimUntil, numberedAfter }, own);
  }
}

/** A failed fence of a turn's unit of work as the error the turn ends with (any other error as it is). */
function fenceError(error: unknown, conversation: Conversation): unknown {
  if (!(error instanceof FenceFailed)) return error;
  if (error.fence === 'inbox')
    // Another process answered the message (its lease outlived ours): this turn must not commit.
    return new AppError('conflict', `an inbox item of conversation ${conversation.id} was already answered`, {
      fault: 'system',
    });
  return new AppError('version_conflict', `conversation ${conversation.id} changed during the turn`, {
    fault: 'system',
    retryable: true,
  });
}

/** Another process answered this message (its lease outlived ours): this turn must not commit. */
async function completeOnce(tx: TurnTx, inboxId: string, status: 'processed' | 'ignored', now: Date): Promise<void> {
  if (!(await tx.completeInbox(inboxId, status, now))) {
    throw new AppError('conflict', `inbox item ${inboxId} was already answered`, { fault: 'system' });
  }
}
