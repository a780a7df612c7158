import type { Conversation, Message, Participant, Poll } from '../core/domain.ts';
import type { LlmMessage } from '../llm/llm-provider.ts';
import type { FlowContextRead, FlowReads, FlowWrites } from '../store/store.ts';
import type { AnyTool } from '../tools/define-tool.ts';
import type { ApprovalRequest, ToolLoopInput, ToolLoopResult } from './tool-loop.ts';

/** What a flow's own turn procedure gets: the model, the transcript and the narration hooks. */
export type FlowRunContext = Pick<
  ToolLoopInput,
  | 'provider'
  | 'messages'
  | 'signal'
  | 'elapsed'
  | 'onTextDelta'
  | 'onModelCall'
  | 'onToolStart'
  | 'onToolCall'
  | 'onAudit'
  | 'onApprovalRequested'
  | 'toolCallLimits'
>;

export type { ApprovalRequest };

/** What starts a turn: a participant's message, or an event the flow reacts to (a greeting, a timer). */
export type TurnInput =
  | {
      kind: 'message';
      /** What the person said; for a batch, its messages' texts in order, a blank line between them. */
      text: string;
      /** The inbox item the turn answers (of a batch, the last). */
      inboxId: string;
      /** Several messages one turn answers together (a burst over the sender's turn limit), oldest first. */
      batch?: ReadonlyArray<AnsweredMessage>;
      /** The W3C `traceparent` of the request that brought the (last) message, when tracing is on. */
      traceParent?: string;
    }
  | {
      kind: 'event';
      /** `greeting`, `timer`, ... recorded on the turn. */
      trigger: string;
      /** Given to the model as the user's turn, never stored as something the participant said. */
      hint: string;
    };

export interface AnsweredMessage {
  inboxId: string;
  text: string;
}

/** The inbox items a message turn answers, oldest first, each with its own text. */
export function answeredMessages(input: Extract<TurnInput, { kind: 'message' }>): ReadonlyArray<AnsweredMessage> {
  return input.batch ?? [{ inboxId: input.inboxId, text: input.text }];
}

export interface TurnRequest {
  /** The id the turn is recorded under (its audit entries carry it). */
  turnId: string;
  conversation: Conversation;
  participant: Participant | null;
  /** The stored transcript's last 50 messages, before this turn. */
  history: readonly Message[];
  input: TurnInput;
  now: Date;
  /** For reads only: writes belong in `PreparedTurn.commit`. */
  store: FlowReads;
  /** What the flow's `contextRead` read with the turn's context, by column name. */
  contextColumns?: Record<string, unknown>;
}

/** A message the flow wants sent after the reply (a poll, a debug note). */
export interface ExtraMessage {
  kind: 'text' | 'poll';
  text: string;
  poll?: Poll;
  /** False for operator-facing notes (debug): stored and sent, but never shown to the model. */
  visibleToModel: boolean;
}

export interface TurnOutcome {
  /** The conversation's new top-level state or sub-state, when the turn changed them. */
  conversationPatch?: { state?: string; subState?: string | null };
  /** Sent after the reply, in order. */
  extraMessages?: ExtraMessage[];
}

/**
 * One turn as a flow prepared it: the module that handles it, what the model reads, the tools it
 * may call (closures over the flow's working state), and how to finish and persist the turn.
 */
export interface PreparedTurn {
  module: string;
  systemMessages: LlmMessage[];
  tools: ReadonlyArray<AnyTool>;
  fallbackText: string;
  /**
   * The reply may be code or JSON (the assistant answering a developer) and is kept as written;
   * otherwise it is narration, and JSON-looking output never reaches the person.
   */
  codeAllowed?: boolean;
  /**
   * The flow's own turn procedure in place of the default tool loop (the service desk: decide,
   * gate, act, narrate). Its tool calls are audited and narrated like the loop's.
   */
  run?(context: FlowRunContext): Promise<ToolLoopResult>;
  /** Called once the loop ended (or the model failed, with `result` undefined). */
  finish(result: ToolLoopResult | undefined): TurnOutcome;
  /** Writes the flow's working state in the turn's transaction. */
  commit(tx: FlowWrites): Promise<void>;
}

export type CallerField = 'phone' | 'id';

/** A conversation flow: habit coaching, a service desk, an assistant. The engine knows no more. */
export interface Flow {
  readonly id: string;
  /** State and sub-state of a new conversation. */
  initialState(): { state: string; subState: string | null };
  /** The sub-states an operator may force (`INTAKE`, `FEEDBACK`). */
  readonly subStates: readonly string[];
  /** False for flows a web session may run without a participant (the service desk). */
  readonly needsParticipant?: boolean;
  /**
   * What a web session of this flow may be told about who is on the other end (`caller` when it
   * starts, a message's `phoneNumber`): `phone` (the service desk verifies it with the ZIP),
   * `id` (the operator's key for the person whose memory the session shares). Unset = nothing.
   */
  readonly callerFields?: ReadonlyArray<CallerField>;
  /** True for flows that search their transcript (the assistant's recall): only theirs is full-text indexed. */
  readonly searchesTranscript?: boolean;
  /**
   * Rewrites a person's message before it is stored anywhere (the inbox, then the transcript):
   * the assistant redacts secrets and caps the length. Must be idempotent.
   */
  redactInput?(text: string): string;
  /** Runs in the transaction of an operator's forced sub-state change (cancel what it obsoletes). */
  onSubStateForced?(tx: FlowWrites, conversation: Conversation, now: Date): Promise<void>;
  /** Runs in the transaction that sets a paused (or otherwise inactive) participant active again. */
  onParticipantResumed?(tx: FlowWrites, conversation: Conversation, now: Date): Promise<void>;
  /** Runs in the transaction that changes the participant's time zone (`from` is null when they had none). */
  onParticipantMoved?(
    tx: FlowWrites,
    conversation: Conversation,
    from: string | null,
    to: string,
    now: Date,
  ): Promise<void>;
  /**
   * What a UI needs to rebuild the conversation's screen after a reconnect (the `resync`
   * snapshot's `view`): never secrets or internal ids. Reads only.
   */
  sessionView?(
    conversation: Conversation,
    context: { store: FlowReads; now: Date },
  ): Promise<Record<string, unknown> | null>;
  /** The hint for the first turn after enrollment, or of a web session (no participant). */
  greetingHint(participant: Participant | null): string;
  /** Null: nothing to do (an event turn whose work was done meanwhile): no reply, no record. */
  prepareTurn(request: TurnRequest): Promise<PreparedTurn | null>;
  /**
   * The flow's own reads of a turn as columns of the statement that reads the turn's context
   * (decision 020): one read fewer per turn. Their values come as `TurnRequest.contextColumns`.
   */
  readonly contextRead?: FlowContextRead['columns'];
}
