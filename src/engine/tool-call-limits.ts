import type { LlmToolCall } from '../llm/llm-provider.ts';
import { toolError, type ToolOutcome } from '../tools/define-tool.ts';

/**
 * How many tool calls one model response, and one turn, may run (`LLM_MAX_TOOL_CALLS_PER_RESPONSE`,
 * `LLM_MAX_TOOL_CALLS_PER_TURN`). Calls beyond either are not run: each is answered with an error
 * result, so the model learns why and every tool call id still gets its one result.
 */
export interface ToolCallLimits {
  readonly perResponse: number;
  readonly perTurn: number;
}

export const DEFAULT_TOOL_CALL_LIMITS: ToolCallLimits = Object.freeze({ perResponse: 8, perTurn: 24 });

/** One call of a response: run it, or answer it with `outcome` without running anything. */
export type ToolCallAdmission =
  { call: LlmToolCall; run: true } | { call: LlmToolCall; run: false; outcome: ToolOutcome };

/**
 * Which calls of one response run, in the order the model sent them: the first
 * `perResponse`, as long as the turn stays within `perTurn` (`admittedBefore`: calls of earlier
 * responses this turn that were admitted). Pure; the loop executes.
 */
export function admitToolCalls(
  calls: readonly LlmToolCall[],
  admittedBefore: number,
  limits: ToolCallLimits,
): ToolCallAdmission[] {
  return calls.map((call, index) => {
    if (index >= limits.perResponse) return { call, run: false, outcome: tooManyInResponse(limits.perResponse) };
    if (admittedBefore + index >= limits.perTurn) return { call, run: false, outcome: tooManyInTurn(limits.perTurn) };
    return { call, run: true };
  });
}

const tooManyInResponse = (limit: number) =>
  toolError(
    `too many tool calls in one response; at most ${limit} are run. ` +
      'This call was not run: make it again later if you still need it.',
  );
const tooManyInTurn = (limit: number) =>
  toolError(
    `too many tool calls in this turn; at most ${limit} are run per reply. ` +
      'This call was not run: answer with the results you have.',
  );
