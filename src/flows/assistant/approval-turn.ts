import type { FlowRunContext, TurnInput } from '../../engine/flow.ts';
import type { ExecutedToolCall } from '../../engine/tool-loop.ts';
import type { LlmMessage, LlmToolCall } from '../../llm/llm-provider.ts';
import type { AnyTool, ToolOutcome } from '../../tools/define-tool.ts';
import { executeToolCall } from '../../tools/execute-tool-call.ts';
import {
  answerOf,
  closePause,
  decideAll,
  DROPPED,
  NOT_APPROVED,
  owesResume,
  waiting,
  type ApprovalState,
  type HeldCall,
  type Pause,
} from './approvals.ts';

/** The trigger of the event turn that resumes a decided pause (decision 022). */
export const APPROVAL_TRIGGER = 'approval';

/** What a turn does about the conversation's pause, decided before it runs. */
export type PausePlan =
  /** Nothing waits: an ordinary turn. `state` is what to store if the turn stores anything. */
  | { kind: 'none'; state: ApprovalState; changed: boolean }
  /** Resume the pause (its calls decided); then answer `newRequest` too, when the person said something new. */
  | { kind: 'resume'; pause: Pause; state: ApprovalState; newRequest: string | null }
  /** An approval event turn with nothing owed (resumed already): no turn at all. */
  | { kind: 'nothing' };

/**
 * Reads the turn's input against the stored pause: a plain yes or no answers every waiting call,
 * anything else drops them and is a new request; a decided pause is resumed first.
 */
export function planForPause(current: ApprovalState, input: TurnInput, requestText: string, now: Date): PausePlan {
  const { pause } = current;
  if (input.kind === 'event' && input.trigger === APPROVAL_TRIGGER)
    return pause && owesResume(current)
      ? { kind: 'resume', pause, state: current, newRequest: null }
      : { kind: 'nothing' };
  if (!pause || input.kind !== 'message') return { kind: 'none', state: current, changed: false };
  if (waiting(current).length === 0) return { kind: 'resume', pause, state: current, newRequest: requestText };
  const answer = answerOf(requestText);
  if (answer === 'other') return { kind: 'none', state: closePause(decideAll(current, 'dropped', now)), changed: true };
  const decided = decideAll(current, answer === 'yes' ? 'approved' : 'denied', now);
  return { kind: 'resume', pause: decided.pause!, state: decided, newRequest: null };
}

/**
 * The pause's dialogue with a result for each held call: approved ones run now (narrated and
 * audited like any call), the others are answered with why they did not run. Then the person's
 * new request, if any. The agentic loop goes on from there.
 */
export async function resumedDialogue(
  pause: Pause,
  tools: ReadonlyArray<AnyTool>,
  context: FlowRunContext,
  newRequest: string | null,
): Promise<{ dialogue: LlmMessage[]; toolMs: number }> {
  const toolsByName = new Map(tools.map((tool) => [tool.name, tool]));
  const dialogue = [...pause.dialogue];
  let toolMs = 0;
  for (const held of pause.calls) {
    const executed = await settle(held, toolsByName, context);
    toolMs += executed.durationMs;
    dialogue.push({ role: 'tool', toolCallId: held.id, content: executed.outcome.result });
  }
  if (newRequest !== null) dialogue.push({ role: 'user', content: newRequest });
  return { dialogue, toolMs };
}

async function settle(
  held: HeldCall,
  toolsByName: ReadonlyMap<string, AnyTool>,
  context: FlowRunContext,
): Promise<ExecutedToolCall> {
  const call: LlmToolCall = { id: held.id, name: held.name, arguments: held.arguments };
  const startedAt = context.elapsed();
  if (held.status !== 'approved') {
    const outcome: ToolOutcome = { status: 'error', result: held.status === 'denied' ? NOT_APPROVED : DROPPED };
    const refused = { round: 0, call, outcome, startedAt, durationMs: 0 };
    context.onAudit?.(refused);
    return refused;
  }
  context.onToolStart?.(call);
  const outcome = await executeToolCall(toolsByName, call, context.signal);
  const executed = { round: 0, call, outcome, startedAt, durationMs: context.elapsed() - startedAt };
  context.onToolCall?.(executed);
  return executed;
}
