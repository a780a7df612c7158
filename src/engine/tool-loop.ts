import type { LlmMessage, LlmProvider, LlmResponse, LlmToolCall, LlmToolSpec } from '../llm/llm-provider.ts';
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
  /**
   * Records an entry in the turn's audit without narrating it: a call answered without running
   * (over the limits, refused), a flow's own entries (a proposal, a gate decision).
   */
  onAudit?: (entry: ExecutedToolCall) => void;
  /** A call waits for a person's yes (a `guardCall` hook held it, decision 022): the stream and console are told. */
  onApprovalRequested?: (request: ApprovalRequest) => void;
  /** How a flow shapes the loop; none: the house loop (BEHAVIOR-NOTES "Tool loop"). */
  hooks?: ToolLoopHooks;
}

/** A held tool call as a person or an operator sees it before saying yes or no. */
export interface ApprovalRequest {
  callId: string;
  tool: string;
  /** As the model wrote them (JSON text). */
  arguments: string;
  /** What would happen, in words ("delete your note "buy milk""). */
  summary: string;
}

/** Where the loop is, for the hooks. */
export interface LoopState {
  modelCalls: number;
  toolRounds: number;
  /** Tool results are already in the messages. */
  sawToolResults: boolean;
}

/** What a model response means. */
export type LoopStep =
  | { kind: 'reply'; text: string }
  | { kind: 'fallback'; reason: 'empty-response' | 'round-limit' }
  /** Call the model again, after `note` (a user message) when there is one. */
  | { kind: 'again'; note?: string }
  /** Run `calls`; then call the model again, or end as `then` says. */
  | { kind: 'run-tools'; calls: LlmToolCall[]; then?: Extract<LoopStep, { kind: 'reply' | 'fallback' }> };

/** What happens to one call before it runs. */
export type CallVerdict = { run: true } | { run: false; outcome: ToolOutcome } | { hold: string };

/** The request of one model call, as a flow shapes it. */
export interface StepRequest {
  messages: LlmMessage[];
  tools?: LlmToolSpec[] | undefined;
  /** Another model than the provider's for this call (the desk's interpreter). */
  model?: string | undefined;
  onTextDelta?: ((delta: string) => void) | undefined;
  /** After the call (flush what a stream filter held back). */
  after?: () => void;
}

/**
 * The loop's small hooks (decision 019): every flow runs the same loop (model call, decide, run
 * the calls with their limits, audit and narration), and shapes only these.
 */
export interface ToolLoopHooks {
  /**
   * The next call's request from the loop's messages (a system message with a fresh context
   * block); may append a note to them first (a nudge to answer).
   */
  prepareStep?(messages: LlmMessage[], state: LoopState): StepRequest;
  /** What a response means (default: `decideNextStep`). */
  decide?(response: LlmResponse, state: LoopState): LoopStep;
  /** Before a call runs: run it, answer it without running it, or hold it for a person's yes (`hold`: the summary). */
  guardCall?(call: LlmToolCall): CallVerdict;
  /** A call that ran. */
  ran?(call: LlmToolCall, outcome: ToolOutcome): void;
  /** The text that ends a reply whose round held calls (the question to the person). */
  holdText?(held: ReadonlyArray<HeldToolCall>): string;
  /** The loop would end with the fallback for `reason`: a text to end with instead, or undefined. */
  rescue?(
    reason: 'empty-response' | 'round-limit',
    messages: readonly LlmMessage[],
    result: ToolLoopResult,
  ): Promise<string | undefined>;
}

/** A call that waits for a person: what they approve. */
export interface HeldToolCall {
  call: LlmToolCall;
  summary: string;
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
  /** The reply stopped to ask a person (decision 022): the messages to resume from, and what waits. */
  held?: { messages: LlmMessage[]; calls: HeldToolCall[] };
}

/** The agentic loop: a short `while` over model call → decide → run tools, shaped by the flow's hooks. */
export async function runToolLoop(input: ToolLoopInput): Promise<ToolLoopResult> {
  const maxRounds = input.maxRounds ?? MAX_TOOL_ROUNDS;
  const hooks = input.hooks ?? {};
  const decide = hooks.decide ?? ((response, state) => houseStep(response, state.toolRounds, maxRounds));
  const toolsByName = new Map(input.tools.map((tool) => [tool.name, tool]));
  const specs = input.tools.length > 0 ? input.tools.map(toolSpec) : undefined;
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
  const state = (): LoopState => ({
    modelCalls: result.modelCalls,
    toolRounds: result.toolRounds,
    sawToolResults: messages.some((message) => message.role === 'tool'),
  });
  const end = async (step: Extract<LoopStep, { kind: 'reply' | 'fallback' }>): Promise<ToolLoopResult> => {
    if (step.kind === 'reply') return { ...result, text: step.text };
    const rescued = await hooks.rescue?.(step.reason, messages, result);
    return rescued ? { ...result, text: rescued } : { ...result, text: input.fallbackText, endedBy: step.reason };
  };

  for (;;) {
    const request = hooks.prepareStep?.(messages, state()) ?? { messages, tools: specs };
    const modelStart = input.elapsed();
    input.onModelCall?.();
    const response = await input.provider.complete(
      { messages: request.messages, tools: request.tools, ...(request.model ? { model: request.model } : {}) },
      { signal: input.signal, onTextDelta: request.onTextDelta ?? input.onTextDelta },
    );
    request.after?.();
    result.modelMs += input.elapsed() - modelStart;
    result.modelCalls += 1;
    result.model = response.model;

    const step = decide(response, state());
    if (step.kind === 'reply' || step.kind === 'fallback') return end(step);
    if (step.kind === 'again') {
      if (step.note) messages.push({ role: 'user', content: step.note });
      continue;
    }
    result.toolRounds += 1;
    messages.push({ role: 'assistant', content: response.text, toolCalls: step.calls });
    const held: HeldToolCall[] = [];
    for (const admission of admitToolCalls(step.calls, admitted, limits)) {
      const { call } = admission;
      if (admission.run) admitted += 1;
      const verdict: CallVerdict = admission.run
        ? (hooks.guardCall?.(call) ?? { run: true })
        : { run: false, outcome: admission.outcome };
      if ('hold' in verdict) {
        held.push(hold(call, verdict.hold, result.toolRounds, input));
        continue;
      }
      const executed = verdict.run
        ? await runOne(toolsByName, call, result.toolRounds, input)
        : refuse(verdict.outcome, call, result.toolRounds, input);
      if (verdict.run) hooks.ran?.(call, executed.outcome);
      result.toolCalls.push(executed);
      result.toolMs += executed.durationMs;
      messages.push({ role: 'tool', toolCallId: call.id, content: executed.outcome.result });
    }
    // A person decides before anything more happens: the reply ends with the question.
    if (held.length > 0)
      return { ...result, text: hooks.holdText?.(held) ?? '', held: { messages: [...messages], calls: held } };
    if (step.then) return end(step.then);
  }
}

/** The house loop's reading of a response (`decideNextStep`) as a loop step. */
function houseStep(response: LlmResponse, toolRounds: number, maxRounds: number): LoopStep {
  const step = decideNextStep(response, toolRounds, maxRounds);
  if (step.kind !== 'run-tools') return step;
  const after = step.afterTools;
  return { kind: 'run-tools', calls: step.calls, ...(after.kind === 'call-model' ? {} : { then: after }) };
}

/** A call that waits for a person: audited as waiting, announced, not run. */
function hold(call: LlmToolCall, summary: string, round: number, input: ToolLoopInput): HeldToolCall {
  const outcome = { status: 'ok' as const, result: `Waiting for the person's approval: ${summary}` };
  input.onAudit?.({ round, call, outcome, startedAt: input.elapsed(), durationMs: 0 });
  input.onApprovalRequested?.({ callId: call.id, tool: call.name, arguments: call.arguments, summary });
  return { call, summary };
}

/** A call over the limits, or refused by the flow's guard: answered with `outcome`, audited, never run. */
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
