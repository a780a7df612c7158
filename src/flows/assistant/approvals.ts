import { z } from 'zod';
import type { LlmToolCall } from '../../llm/llm-provider.ts';
import type { AnyTool } from '../../tools/define-tool.ts';
import { parseArguments } from '../../tools/execute-tool-call.ts';

/**
 * Tool calls that wait for a person's yes (decision 022). The pause lives in the conversation's
 * flow state, written in the transaction of the turn that asked; this module is its pure model.
 */

export const CALL_STATUSES = ['pending', 'approved', 'denied', 'dropped'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

const heldCall = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.string(),
  summary: z.string(),
  status: z.enum(CALL_STATUSES),
  decidedAt: z.string().nullable(),
  decidedBy: z.enum(['person', 'operator']).nullable(),
});
export type HeldCall = z.infer<typeof heldCall>;

const llmMessage = z.union([
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).optional(),
  }),
  z.object({ role: z.literal('tool'), toolCallId: z.string(), content: z.string() }),
]);

const pause = z.object({
  /** The turn that asked. */
  turnId: z.string(),
  requestedAt: z.string(),
  profile: z.string(),
  /** The system message the loop ran with (recalled memory included), without the context block. */
  system: z.string(),
  /** The dialogue up to and including the response that held the calls, and the results of its other calls. */
  dialogue: z.array(llmMessage),
  calls: z.array(heldCall).min(1),
});
export type Pause = z.infer<typeof pause>;

const state = z.object({
  pause: pause.nullable().default(null),
  /** The last decided calls, newest last (for `GET …/approvals` and the console). */
  decided: z.array(heldCall.extend({ turnId: z.string() })).default([]),
});
export type ApprovalState = z.infer<typeof state>;

const KEEP_DECIDED = 20;

/** The stored state, or an empty one (none yet, or written by an older version). */
export function readApprovals(stored: unknown): ApprovalState {
  const parsed = state.safeParse(stored ?? {});
  return parsed.success ? parsed.data : { pause: null, decided: [] };
}

/** The calls still waiting for an answer. */
export const waiting = (current: ApprovalState): HeldCall[] =>
  current.pause?.calls.filter((call) => call.status === 'pending') ?? [];

/** A pause whose every call is decided but which has not resumed yet: a turn is owed. */
export const owesResume = (current: ApprovalState): boolean =>
  current.pause !== null && current.pause.calls.every((call) => call.status !== 'pending');

export type Decision =
  | { kind: 'decided'; state: ApprovalState; call: HeldCall; complete: boolean }
  | { kind: 'unchanged'; call: HeldCall }
  | { kind: 'conflict'; call: HeldCall }
  | { kind: 'unknown' };

/**
 * An operator's (or a UI's) answer to one call. The same answer twice is `unchanged` (a retried
 * request); the other answer to a decided call is a `conflict`.
 */
export function decideCall(current: ApprovalState, callId: string, approve: boolean, now: Date): Decision {
  const call = current.pause?.calls.find((candidate) => candidate.id === callId);
  if (!call) {
    const earlier = current.decided.findLast((candidate) => candidate.id === callId);
    if (!earlier) return { kind: 'unknown' };
    return earlier.status === (approve ? 'approved' : 'denied')
      ? { kind: 'unchanged', call: earlier }
      : { kind: 'conflict', call: earlier };
  }
  const status: CallStatus = approve ? 'approved' : 'denied';
  if (call.status !== 'pending')
    return call.status === status ? { kind: 'unchanged', call } : { kind: 'conflict', call };
  const decided: HeldCall = { ...call, status, decidedAt: now.toISOString(), decidedBy: 'operator' };
  const calls = current.pause!.calls.map((candidate) => (candidate.id === callId ? decided : candidate));
  const next = { ...current, pause: { ...current.pause!, calls } };
  return { kind: 'decided', state: next, call: decided, complete: owesResume(next) };
}

/** Every waiting call answered by the person's message (`dropped`: they moved on without answering). */
export function decideAll(current: ApprovalState, status: Exclude<CallStatus, 'pending'>, now: Date): ApprovalState {
  if (!current.pause) return current;
  const calls = current.pause.calls.map((call) =>
    call.status === 'pending' ? { ...call, status, decidedAt: now.toISOString(), decidedBy: 'person' as const } : call,
  );
  return { ...current, pause: { ...current.pause, calls } };
}

/** The pause is over (resumed, or dropped): its calls go to the decided list. */
export function closePause(current: ApprovalState): ApprovalState {
  if (!current.pause) return current;
  const turnId = current.pause.turnId;
  const decided = [...current.decided, ...current.pause.calls.map((call) => ({ ...call, turnId }))];
  return { pause: null, decided: decided.slice(-KEEP_DECIDED) };
}

export function openPause(current: ApprovalState, opened: Omit<Pause, 'calls'>, calls: HeldCall[]): ApprovalState {
  return { ...closePause(current), pause: { ...opened, calls } };
}

const YES =
  /^(yes|y|yeah|yep|yup|sure|ok|okay|go ahead|do it|please do|approve|approved|confirm|confirmed|that's fine|fine)\b/;
const NO = /^(no|n|nope|nah|don't|do not|cancel|stop|deny|denied|reject|never ?mind|leave it|keep it)\b/;

/**
 * A person's plain yes or no to a question that waits: short answers only ("yes please", "no,
 * keep it"); anything longer or else is a new request (`other`).
 */
export function answerOf(text: string): 'yes' | 'no' | 'other' {
  const said = text
    .trim()
    .toLowerCase()
    .replace(/[’]/g, "'")
    .replace(/[.!]+$/, '');
  if (said.length > 40) return 'other';
  if (YES.test(said)) return 'yes';
  if (NO.test(said)) return 'no';
  return 'other';
}

/** What the person reads: exactly what would happen, and how to answer. */
export function approvalQuestion(calls: ReadonlyArray<{ summary: string }>): string {
  if (calls.length === 1)
    return `Before I go ahead, I need your OK to: ${calls[0]!.summary}.\nReply yes to go ahead, or no to leave it.`;
  const list = calls.map((call, index) => `${index + 1}. ${call.summary}`).join('\n');
  return `Before I go ahead, I need your OK to:\n${list}\nReply yes to go ahead with all of them, or no to leave them.`;
}

export const NOT_APPROVED = 'Not run: the person did not approve it.';
export const DROPPED = 'Not run: the person did not answer the approval question and moved on.';

/**
 * The sentence a person approves for one call: the tool's own, or a plain one from its arguments.
 * Null when there is nothing to approve (arguments that do not validate, a change that changes
 * nothing): the call runs and reports its error.
 */
export function describeHeldCall(tool: AnyTool, call: LlmToolCall): string | null {
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok) return null;
  const validated = tool.input.safeParse(parsed.value);
  if (!validated.success) return null;
  if (tool.describeCall) return tool.describeCall(validated.data);
  return `run ${tool.name}${argumentsInWords(validated.data)}`;
}

/** ` (title: "Dentist", minutes: 30)`: a call's arguments as a person reads them, capped; empty for none. */
export function argumentsInWords(input: unknown): string {
  const args = Object.entries((input ?? {}) as Record<string, unknown>)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? `"${value}"` : JSON.stringify(value)}`)
    .join(', ');
  if (!args) return '';
  return ` (${args.length > 200 ? `${args.slice(0, 200)}…` : args})`;
}

export const heldCallOf = (call: LlmToolCall, summary: string): HeldCall => ({
  id: call.id,
  name: call.name,
  arguments: call.arguments,
  summary,
  status: 'pending',
  decidedAt: null,
  decidedBy: null,
});
