import type { LlmMessage, LlmProvider, LlmToolCall } from '../llm/llm-provider.ts';
import type { AnyTool, ToolOutcome } from '../tools/define-tool.ts';
import { toolSpec } from '../tools/define-tool.ts';
import { executeToolCall } from '../tools/execute-tool-call.ts';
import { decideNextStep } from './decide-next-step.ts';
import { admitToolCalls, DEFAULT_TOOL_CALL_LIMITS, type ToolCallLimits } from './tool-call-limits.ts';

export const MAX_TOOL_ROUNDS = 10;

export interface ExecutedToolCall {
  round: number;
  call: LlmToolCall;
  outcome: ToolOutcome;
  startedAt: number;
  durationMs: number;
  /**
   * Already written to the audit log, in the transaction of the side effect it records (the
   * service desk's confirmed changes): the turn's commit does not write it again.
   */
  persisted?: boolean;
}

export interface ToolLoopInput {
  provider: LlmProvider;
  /** System messages, history and the current message, in the order the model reads them. */
  messages: LlmMessage[];
  tools: ReadonlyArray<AnyTool>;
  fallbackText: string;
  signal: AbortSignal;
  maxRounds?: number;
  /** Tool calls run per model response and per turn; the rest get an error result. Default 8 and 24. */
  toolCallLimits?: ToolCallLimits;
  /** Monotonic milliseconds, for durations. */
  elapsed: () => number;
  onTextDelta?: (delta: string) => void;
  /** Called before each model call (a new stream of text deltas begins). */
  onModelCall?: () => void;
  /** Called as each tool call starts. */
  onToolStart?: (call: LlmToolCall) => void;
  /** Called as each tool call finishes, before the next one runs. */
  onToolCall?: (executed: ExecutedToolCall) => void;
  /** Records a call answered without running it (over the limits) in the turn's audit, without narrating it. */
  onAudit?: (entry: ExecutedToolCall) => void;
}

export interface ToolLoopResult {
  text: string;
  endedBy: 'reply' | 'empty-response' | 'round-limit';
  toolCalls: ExecutedToolCall[];
  modelCalls: number;
  toolRounds: number;
  modelMs: number;
  toolMs: number;
  /** Which model answered last, as the provider reported it. */
  model: string;
}

/** The agentic loop: a short `while` over model call → decide → run tools. */
export async function runToolLoop(input: ToolLoopInput): Promise<ToolLoopResult> {
  const maxRounds = input.maxRounds ?? MAX_TOOL_ROUNDS;
  const toolsByName = new Map(input.tools.map((tool) => [tool.name, tool]));
  const specs = input.tools.map(toolSpec);
  const messages = [...input.messages];
  const limits = input.toolCallLimits ?? DEFAULT_TOOL_CALL_LIMITS;
  /** Calls of this turn admitted within the limits. */
  let admitted = 0;
  const result: ToolLoopResult = {
    text: '',
    endedBy: 'reply',
    toolCalls: [],
    modelCalls: 0,
    toolRounds: 0,
    modelMs: 0,
    toolMs: 0,
    model: input.provider.model,
  };

  for (;;) {
    const modelStart = input.elapsed();
    input.onModelCall?.();
    const response = await input.provider.complete(
      { messages, tools: specs.length > 0 ? specs : undefined },
      { signal: input.signal, onTextDelta: input.onTextDelta },
    );
    result.modelMs += input.elapsed() - modelStart;
    result.modelCalls += 1;
    result.model = response.model;

    const step = decideNextStep(response, result.toolRounds, maxRounds);
    if (step.kind === 'fallback') return { ...result, text: input.fallbackText, endedBy: step.reason };
    if (step.kind === 'reply') return { ...result, text: step.text };

    result.toolRounds += 1;
    messages.push({ role: 'assistant', content: response.text, toolCalls: step.calls });
    for (const admission of admitToolCalls(step.calls, admitted, limits)) {
      const { call } = admission;
      if (admission.run) admitted += 1;
      const executed = admission.run
        ? await runOne(toolsByName, call, result.toolRounds, input)
        : refuse(admission.outcome, call, result.toolRounds, input);
      result.toolCalls.push(executed);
      result.toolMs += executed.durationMs;
      messages.push({ role: 'tool', toolCallId: call.id, content: executed.outcome.result });
    }
    const after = step.afterTools;
    if (after.kind === 'reply') return { ...result, text: after.text };
    if (after.kind === 'fallback') return { ...result, text: input.fallbackText, endedBy: after.reason };
  }
}

/** A call over the limits: answered with `outcome`, audited, never run. */
function refuse(outcome: ToolOutcome, call: LlmToolCall, round: number, input: ToolLoopInput): ExecutedToolCall {
  const refused = { round, call, outcome, startedAt: input.elapsed(), durationMs: 0 };
  input.onAudit?.(refused);
  return refused;
}

async function runOne(
  tools: ReadonlyMap<string, AnyTool>,
  call: LlmToolCall,
  round: number,
  input: ToolLoopInput,
): Promise<ExecutedToolCall> {
  input.onToolStart?.(call);
  const startedAt = input.elapsed();
  const outcome = await executeToolCall(tools, call, input.signal);
  const executed = { round, call, outcome, startedAt, durationMs: input.elapsed() - startedAt };
  input.onToolCall?.(executed);
  return executed;
}
