import type { Logger } from 'pino';
import type { ChannelGate, KnownContact } from './channel-gate.ts';
import type { Channel, ChannelDirectory, OutboundMessage } from '../channels/channel.ts';
import { WEB_CHANNEL } from '../channels/web-channel.ts';
import type { Clock, IdGenerator } from '../core/clock.ts';
import type { Conversation, Participant, ParticipantStatus } from '../core/domain.ts';
import { AppError } from '../core/errors.ts';
import type { EnginePort, EngineTx, FlowWrites } from '../store/store.ts';
import type { Engine } from './engine.ts';
import type { Flow } from './flow.ts';

export const GOODBYE_TEXT = 'You have been unenrolled from this program. Thank you for taking part. Take care!';

export interface EnrollmentInput {
  phoneNumber: string;
  name?: string | null;
  gender?: string | null;
  ethnicity?: string | null;
  background?: string | null;
  timezone?: string | null;
  /** The study group (an arm, a site). */
  cohort?: string | null;
  /** The channel to reach them on (one of the configured ones); default: the server's default channel. */
  channel?: string | undefined;
  /** The flow their conversation runs; default: the server's default flow (habit coaching). */
  flow?: string | undefined;
}

/** Who a web session is for, as the operator gives it (`phone` canonical). */
export interface SessionCallerInput {
  phone?: string | undefined;
  id?: string | undefined;
}

export type ParticipantPatch = Partial<
  Pick<Participant, 'name' | 'gender' | 'ethnicity' | 'background' | 'timezone' | 'status' | 'cohort' | 'debug'>
>;

/**
 * What `updateIn` needs of the caller's transaction: the participant, their conversation and
 * timers, and the flow's writes (its `onParticipantMoved` and `onParticipantResumed` run in it).
 */
export type ParticipantUpdateTx = Pick<
  EngineTx,
  'lockParticipant' | 'updateParticipant' | 'findConversationByParticipant' | 'cancelTimersOf'
> &
  FlowWrites;

/**
 * What the participant service's transactions hand it: enrolment and session starts, `updateIn`,
 * and an operator's forced sub-state (the flow's `onSubStateForced` writes in it).
 */
export type ParticipantTx = Pick<
  EngineTx,
  | 'insertParticipant'
  | 'insertConversation'
  | 'saveSessionCaller'
  | 'getConversation'
  | 'updateConversation'
  | 'appendMessages'
> &
  ParticipantUpdateTx;

/**
 * The participant service's view of the store. `deleteParticipant` is the engine's, though the
 * adapter removes the person's rows in the flows' tables with it (profile, schedules, notes, the
 * personal fields of desk tickets: decision 024).
 */
export type ParticipantStore = Pick<
  EnginePort<ParticipantTx>,
  | 'transaction'
  | 'getParticipant'
  | 'findParticipantByPhone'
  | 'listParticipants'
  | 'countParticipants'
  | 'findConversationByParticipant'
  | 'saveSessionCaller'
  | 'deleteParticipant'
  | 'conversationsOfParticipant'
>;

export interface ParticipantServiceDeps {
  store: ParticipantStore;
  engine: Engine;
  /** Every flow this server runs, and the one enrollment picks unless told otherwise. */
  flows: ReadonlyMap<string, Flow>;
  defaultFlow: string;
  /** The channels participants are reached on; the default one unless enrollment names another. */
  channels: ChannelDirectory;
  /** Direct sends (not through the outbox) pass it too. */
  gate: ChannelGate;
  clock: Clock;
  ids: IdGenerator;
  logger: Logger;
}

/** Enrollment, updates and removal of participants, each with its effect on the conversation. */
export class ParticipantService {
  readonly #deps: ParticipantServiceDeps;

  constructor(deps: ParticipantServiceDeps) {
    this.#deps = deps;
  }

  /**
   * Creates the participant and their conversation in one transaction, then queues the greeting
   * turn (not awaited: enrollment answers at once). The phone number must already be canonical.
   */
  async enroll(
    input: EnrollmentInput,
    options: { greet?: boolean } = {},
  ): Promise<{ participant: Participant; conversation: Conversation; greeting: Promise<unknown> }> {
    const drafted = this.#draft(input, this.#deps.clock.now());
    await this.#deps.store.transaction(async (tx) => {
      await tx.insertParticipant(drafted.participant);
      await tx.insertConversation(drafted.conversation, searchOption(drafted.flow));
    });
    const greeting = options.greet === false ? Promise.resolve() : this.#greet(drafted);
    return { participant: drafted.participant, conversation: drafted.conversation, greeting };
  }

  /**
   * Enrols everyone or no one (one transaction: a phone number already taken refuses the lot),
   * then greets them one after another in the background, so a large import is not a burst of
   * model calls.
   */
  async enrollMany(inputs: readonly EnrollmentInput[]): Promise<Participant[]> {
    const now = this.#deps.clock.now();
    const drafts = inputs.map((input) => this.#draft(input, now));
    await this.#deps.store.transaction(async (tx) => {
      for (const { participant, conversation, flow } of drafts) {
        await tx.insertParticipant(participant);
        await tx.insertConversation(conversation, searchOption(flow));
      }
    });
    void (async () => {
      for (const drafted of drafts) await this.#greet(drafted);
    })();
    return drafts.map((drafted) => drafted.participant);
  }

  #draft(input: EnrollmentInput, now: Date): { participant: Participant; conversation: Conversation; flow: Flow } {
    const { ids, channels } = this.#deps;
    const flow = this.requireFlow(input.flow ?? this.#deps.defaultFlow);
    // The web channel hands a reply to whoever watches the session, and counts it delivered even
    // when no one does: a participant's prompts would be "sent" to no one.
    const reachable = channels.names.filter((name) => name !== WEB_CHANNEL);
    if (input.channel !== undefined && !reachable.includes(input.channel)) {
      const web = input.channel === WEB_CHANNEL ? ' (web is for web sessions: POST /api/conversations)' : '';
      throw new AppError(
        'invalid_request',
        `channel: must be one of ${reachable.join(', ')} (the channels this server reaches participants on)${web}`,
        { field: 'channel' },
      );
    }
    const participant: Participant = {
      id: ids.next('part'),
      phoneNumber: input.phoneNumber,
      name: input.name ?? null,
      gender: input.gender ?? null,
      ethnicity: input.ethnicity ?? null,
      background: input.background ?? null,
      timezone: input.timezone ?? null,
      status: 'active',
      cohort: input.cohort ?? null,
      debug: false,
      enrolledAt: now,
      createdAt: now,
      updatedAt: now,
    };
    const conversation: Conversation = {
      id: ids.next('conv'),
      participantId: participant.id,
      channel: input.channel ?? channels.defaultChannel.name,
      flow: flow.id,
      ...flow.initialState(),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    return { participant, conversation, flow };
  }

  #greet({
    participant,
    conversation,
    flow,
  }: {
    participant: Participant;
    conversation: Conversation;
    flow: Flow;
  }): Promise<unknown> {
    return this.#deps.engine
      .trigger(conversation.id, { kind: 'event', trigger: 'greeting', hint: flow.greetingHint(participant) })
      .catch((error) => this.#deps.logger.error({ participantId: participant.id, err: error }, 'greeting turn failed'));
  }

  /**
   * A web session of a flow that needs no participant (the service desk): the conversation, then
   * its greeting turn (not awaited).
   */
  /**
   * Starts a web session of a flow that needs no participant, with who it is for when the
   * operator says (`caller`, phone already canonical): stored with the conversation, before its
   * greeting. The person whose memory the session shares is the participant enrolled with that
   * phone, else the operator's `id`, else the phone itself.
   */
  async startSession(flowName: string, caller: SessionCallerInput = {}): Promise<Conversation> {
    const { store, clock, ids, engine, logger } = this.#deps;
    const flow = this.requireFlow(flowName);
    if (flow.needsParticipant !== false) {
      throw new AppError(
        'invalid_request',
        `flow: "${flow.id}" needs a participant; enrol one (POST /conversation/participants with "flow") instead`,
        { field: 'flow' },
      );
    }
    for (const field of ['phone', 'id'] as const) {
      if (caller[field] !== undefined && !flow.callerFields?.includes(field))
        throw new AppError('invalid_request', `caller.${field}: the ${flow.id} flow ${takes(flow)}`, {
          field: `caller.${field}`,
        });
    }
    const now = clock.now();
    const conversation: Conversation = {
      id: ids.next('conv'),
      participantId: null,
      channel: 'web',
      flow: flow.id,
      ...flow.initialState(),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    const person = await this.#personOf(caller);
    await store.transaction(async (tx) => {
      await tx.insertConversation(conversation, searchOption(flow));
      if (caller.phone !== undefined || person !== null)
        await tx.saveSessionCaller(conversation.id, { phone: caller.phone ?? null, person }, now);
    });
    engine
      .trigger(conversation.id, { kind: 'event', trigger: 'greeting', hint: flow.greetingHint(null) })
      .catch((error) => logger.error({ conversationId: conversation.id, err: error }, 'greeting turn failed'));
    return conversation;
  }

  /**
   * The phone a web session's caller gave with a message (`phoneNumber`, already canonical), for
   * the flow to verify; it never changes whose memory the session shares (a browser may say it).
   * `field` names the request field in errors.
   */
  async setCallerPhone(conversation: Conversation, phone: string, field: string): Promise<void> {
    if (conversation.participantId !== null)
      throw new AppError('invalid_request', `${field}: this conversation is a participant's; their phone is known`, {
        field,
      });
    const flow = this.requireFlow(conversation.flow);
    if (!flow.callerFields?.includes('phone'))
      throw new AppError('invalid_request', `${field}: the ${flow.id} flow takes no phone number`, { field });
    await this.#deps.store.saveSessionCaller(conversation.id, { phone }, this.#deps.clock.now());
  }

  async #personOf(caller: SessionCallerInput): Promise<string | null> {
    const enrolled = caller.phone ? await this.#deps.store.findParticipantByPhone(caller.phone) : undefined;
    if (enrolled) return enrolled.id;
    if (caller.id !== undefined) return `id:${caller.id}`;
    return caller.phone ? `tel:${caller.phone}` : null;
  }

  /** The flows a conversation may be started with. */
  get flowNames(): string[] {
    return [...this.#deps.flows.keys()];
  }

  /**
   * A partial update. Leaving `active` cancels every pending timer of the participant; coming
   * back to `active` lets the flow re-arm what it needs (daily schedules).
   */
  async update(id: string, patch: ParticipantPatch): Promise<Participant> {
    return this.#deps.store.transaction((tx) => this.updateIn(tx, id, patch));
  }

  /** Pauses an active participant (they opted out on their channel); anyone else is left as is. */
  async pause(id: string): Promise<void> {
    await this.#deps.store.transaction(async (tx) => {
      if ((await tx.lockParticipant(id))?.status === 'active') await this.updateIn(tx, id, { status: 'paused' });
    });
  }

  /** `update` inside the caller's transaction. */
  async updateIn(tx: ParticipantUpdateTx, id: string, patch: ParticipantPatch): Promise<Participant> {
    const { clock } = this.#deps;
    const before = await tx.lockParticipant(id); // a turn or timer committing meanwhile sees the change
    if (!before) throw notFound(id);
    const now = clock.now();
    const updated = (await tx.updateParticipant(id, patch, now))!;
    const moved = updated.timezone !== null && updated.timezone !== before.timezone;
    if (before.status === updated.status && !moved) return updated;
    const conversation = await tx.findConversationByParticipant(id);
    const flow = conversation && this.flowOf(conversation);
    if (moved && conversation)
      await flow?.onParticipantMoved?.(tx, conversation, before.timezone, updated.timezone!, now);
    if (before.status === updated.status) return updated;
    if (updated.status !== 'active') await tx.cancelTimersOf(id, now);
    if (updated.status === 'active' && conversation) await flow?.onParticipantResumed?.(tx, conversation, now);
    return updated;
  }

  async get(id: string): Promise<Participant> {
    const participant = await this.#deps.store.getParticipant(id);
    if (!participant) throw notFound(id);
    return participant;
  }

  /** One page of participants, oldest enrolment first, and how many there are in all. */
  async list(filter: {
    status?: ParticipantStatus;
    cohort?: string;
    limit: number;
    offset: number;
  }): Promise<{ participants: Participant[]; total: number }> {
    const [participants, total] = await Promise.all([
      this.#deps.store.listParticipants(filter),
      this.#deps.store.countParticipants({ status: filter.status, cohort: filter.cohort }),
    ]);
    return { participants, total };
  }

  /** The flow a conversation runs. */
  /** The conversation's flow, or undefined when this server does not run it (a changed configuration). */
  findFlowOf(conversation: Pick<Conversation, 'flow'>): Flow | undefined {
    return this.#deps.flows.get(conversation.flow);
  }

  flowOf(conversation: Conversation): Flow {
    return this.requireFlow(conversation.flow);
  }

  /** The flow of that name; a 400 naming the field `flow` when there is none. */
  /** The flow called `name`; a 400 naming `flow`, and the flows this server runs, when there is none. */
  requireFlow(name: string): Flow {
    const flow = this.#deps.flows.get(name);
    if (!flow)
      throw new AppError('invalid_request', `flow: must be one of ${[...this.#deps.flows.keys()].join(', ')}`, {
        field: 'flow',
      });
    return flow;
  }

  async conversationOf(participantId: string): Promise<Conversation> {
    const conversation = await this.#deps.store.findConversationByParticipant(participantId);
    if (!conversation) throw notFound(participantId);
    return conversation;
  }

  /**
   * An operator's override of the sub-state, in the conversation's queue (never mid-turn). The
   * change is recorded in the transcript as an operator note, which the model does not read.
   */
  async forceSubState(participantId: string, subState: string, reason: string | undefined): Promise<Conversation> {
    const { store, clock, ids } = this.#deps;
    const current = await this.conversationOf(participantId);
    const flow = this.flowOf(current);
    if (!flow.subStates.includes(subState)) {
      throw new AppError(
        'invalid_request',
        `sub_state: must be one of ${flow.subStates.join(', ') || '(none: this flow has no sub-states)'}`,
        { field: 'sub_state' },
      );
    }
    return this.#deps.engine.exclusive(current.id, () =>
      store.transaction(async (tx) => {
        const now = clock.now();
        const conversation = (await tx.getConversation(current.id)) ?? current;
        const updated = await tx.updateConversation(conversation.id, conversation.version, { subState }, now);
        if (!updated)
          throw new AppError('version_conflict', 'the conversation changed meanwhile; try again', { retryable: true });
        await flow.onSubStateForced?.(tx, updated, now);
        const from = conversation.subState ?? 'none';
        const note = `Operator set the sub-state from ${from} to ${subState}${reason ? `: ${reason}` : ''}.`;
        await tx.appendMessages([
          {
            id: ids.next('msg'),
            conversationId: conversation.id,
            role: 'system',
            kind: 'text',
            text: note,
            poll: null,
            source: 'operator',
            turnId: null,
            createdAt: now,
          },
        ]);
        this.#deps.logger.info(
          { participantId, from: conversation.subState, to: subState },
          'operator forced sub-state',
        );
        return updated;
      }),
    );
  }

  /**
   * Removes the participant and their personal data (decision 024): their conversations and the web
   * sessions started for them go, with all that is in them. Runs in each of those conversations'
   * queues, so it never cuts a turn in half (a session started after the removal began is not
   * waited for). Their replies go with their data: this process drops those it was about to send and
   * waits for the one it is sending, then says goodbye, so none arrives after it (one another process
   * is sending can). The goodbye is decided on their channel contact as it was before it was deleted
   * (a WhatsApp service window still open). Of removals that race, the one that deletes says goodbye;
   * the others find no participant. Returns the ids of the conversations deleted.
   */
  async remove(id: string): Promise<string[]> {
    const { store, engine } = this.#deps;
    const participant = await this.get(id);
    const conversation = await store.findConversationByParticipant(id);
    const conversations = await store.conversationsOfParticipant(id);
    const work = async () => {
      const goodbye = await this.#goodbye(participant, conversation);
      if (!(await store.deleteParticipant(id))) throw notFound(id);
      await Promise.all(conversations.map((conversationId) => engine.forgetConversation(conversationId)));
      await this.#send(participant, goodbye);
    };
    // In id order, as every removal takes them: two removals of one participant never wait on each other.
    const inQueues = conversations.reduceRight<() => Promise<void>>(
      (inner, conversationId) => () => engine.exclusive(conversationId, inner),
      work,
    );
    await inQueues();
    return conversations;
  }

  /** The goodbye, its channel, and the contact it is sent to as it is now (before the deletion). */
  async #goodbye(participant: Participant, conversation: Conversation | undefined): Promise<Goodbye> {
    const channel =
      (conversation && this.#deps.channels.get(conversation.channel)) || this.#deps.channels.defaultChannel;
    const message = {
      id: this.#deps.ids.next('out'),
      participantId: participant.id,
      conversationId: conversation?.id ?? participant.id,
      recipient: participant.phoneNumber,
      kind: 'text' as const,
      text: GOODBYE_TEXT,
      poll: null,
      createdAt: this.#deps.clock.now(),
      idempotencyKey: `goodbye:${participant.id}`,
    };
    // Unread, the gate reads it when sending: a goodbye never stops a removal.
    const contact = await this.#deps.gate.contactFor(channel, message).catch(() => undefined);
    return { channel, message, contact };
  }

  /** Best effort: a goodbye that fails is logged, the removal stands. */
  async #send(participant: Participant, goodbye: Goodbye): Promise<void> {
    try {
      await this.#deps.gate.send(goodbye.channel, goodbye.message, undefined, goodbye.contact);
    } catch (error) {
      this.#deps.logger.warn({ participantId: participant.id, err: error }, 'goodbye not delivered');
    }
  }
}

/** A goodbye to send once the participant's data is gone. */
interface Goodbye {
  channel: Channel;
  message: OutboundMessage;
  /** Read before the deletion; undefined when it could not be. */
  contact: KnownContact | undefined;
}

export function notFound(id: string): AppError {
  return new AppError('participant_not_found', `participant ${id} does not exist`, { field: 'id' });
}

/** Only a flow that searches its transcript has it full-text indexed (decision 020). */
/** What the flow takes of a session's caller, for an error message. */
function takes(flow: Flow): string {
  const fields = flow.callerFields ?? [];
  return fields.length === 0 ? 'takes no caller' : `takes only ${fields.map((f) => `caller.${f}`).join(' and ')}`;
}

const searchOption = (flow: Flow) => ({ transcriptSearch: flow.searchesTranscript === true });
