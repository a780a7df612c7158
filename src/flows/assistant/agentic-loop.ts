import type { FlowRunContext } from '../../engine/flow.ts';
import { admitToolCalls, DEFAULT_TOOL_CALL_LIMITS } from '../../engine/tool-call-limits.ts';
import type { ExecutedToolCall, ToolLoopResult } from '../../engine/tool-loop.ts';
import type { LlmMessage, LlmToolCall } from '../../llm/llm-provider.ts';
import { toolSpec, type AnyTool, type ToolOutcome } from '../../tools/define-tool.ts';
import { executeToolCall } from '../../tools/execute-tool-call.ts';
import { approvalQuestion, describeHeldCall, heldCallOf, type HeldCall } from './approvals.ts';
import { decideAssistantStep } from './assistant-step.ts';
import { CallGuard } from './call-guard.ts';
import { createMarkerFilter, stripToolMarkers } from './tool-markers.ts';

export const ASSISTANT_APOLOGY =
  "Sorry, I couldn't put an answer together this time. Could you ask again, maybe in other words?";
export const CONTINUE_AFTER_THINKING = 'Go on: answer my request now, or call the tool you need.';
export const ANSWER_WITHOUT_TOOLS =
  'No more tools can be called. Answer my request now from the tool results above, and say plainly what you ' +
  'could not find out.';
export const ANSWER_FROM_RESULTS =
  'Answer my request now, using the tool results above. Do not call more tools unless they are essential.';

export interface AgenticLoopInput extends FlowRunContext {
  /** The system message without the per-call context block. */
  system: string;
  /** A fresh context block (time, location), built before every model call. */
  context: () => string;
  /** Recent dialogue and the current request (no system message). */
  dialogue: LlmMessage[];
  /** The tools this reply may use: the profile's allowlist and the MCP tools. */
  tools: ReadonlyArray<AnyTool>;
  maxModelCalls: number;
}

/** A reply that stopped to ask the person (decision 022): the dialogue to resume from, and what waits. */
export interface AgenticLoopResult extends ToolLoopResult {
  pause?: { dialogue: LlmMessage[]; calls: HeldCall[] };
}

/**
 * Spec 003's agentic loop, guarded: at most `maxModelCalls` calls; every tool call of a response
 * runs (or is refused by the `CallGuard` or the tool-call limits) and gets exactly one result with its id; exactly one
 * context block, inside the system message, per call; the person always gets an answer.
 */
export async function runAgenticLoop(input: AgenticLoopInput): Promise<AgenticLoopResult> {
  const toolsByName = new Map(input.tools.map((tool) => [tool.name, tool]));
  const specs = input.tools.map(toolSpec);
  const guard = new CallGuard({ allowed: [...toolsByName.keys()] });
  const dialogue = [...input.dialogue];
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
  let nudged = false;
  let continued = false;
  /** What the person was already told in earlier rounds ("Let me check…"): part of the answer. */
  const said: string[] = [];
  const ids = new CallIds();
  const limits = input.toolCallLimits ?? DEFAULT_TOOL_CALL_LIMITS;
  /** Calls of this reply admitted within the limits (run, or refused by the guard). */
  let admitted = 0;

  for (;;) {
    const modelStart = input.elapsed();
    input.onModelCall?.();
    const sawToolResults = dialogue.some((message) => message.role === 'tool');
    // The last call is asked to answer from the results in hand. Its tools stay declared: some
    // providers refuse a history of tool calls without them; a call it proposes is not run.
    const last = result.modelCalls === input.maxModelCalls - 1;
    if (last && sawToolResults && !nudged) {
      nudged = true;
      dialogue.push({ role: 'user', content: ANSWER_FROM_RESULTS });
    }
    const messages: LlmMessage[] = [{ role: 'system', content: `${input.system}\n\n${input.context()}` }, ...dialogue];
    const onTextDelta = input.onTextDelta && separated(input.onTextDelta, () => said.length > 0);
    const filter = onTextDelta ? createMarkerFilter(onTextDelta) : undefined;
    const tools = specs.length > 0 ? specs : undefined;
    const response = await input.provider.complete(
      { messages, tools },
      { signal: input.signal, onTextDelta: filter && ((delta) => filter.push(delta)) },
    );
    filter?.flush();
    result.modelMs += input.elapsed() - modelStart;
    result.modelCalls += 1;
    result.model = response.model;

    const step = decideAssistantStep(response, {
      modelCalls: result.modelCalls,
      maxModelCalls: input.maxModelCalls,
      sawToolResults,
      nudged,
    });
    switch (step.kind) {
      case 'reply':
        return { ...result, text: [...said, step.text].join('\n\n') };
      case 'apologize': {
        // Out of calls with results in hand: one last call, without tools, answers from them.
        const final =
          step.reason === 'round-limit' && sawToolResults ? await answerFromResults(input, dialogue, result) : '';
        if (final) return { ...result, text: [...said, final].join('\n\n') };
        // What was said along the way is an answer of sorts; only silence gets the apology.
        return said.length > 0
          ? { ...result, text: said.join('\n\n') }
          : { ...result, text: ASSISTANT_APOLOGY, endedBy: step.reason };
      }
      case 'continue':
        // Reasoning is never sent back (providers reject or ignore it); one note moves the model on.
        if (!continued) dialogue.push({ role: 'user', content: CONTINUE_AFTER_THINKING });
        continued = true;
        continue;
      case 'nudge':
        nudged = true;
        dialogue.push({ role: 'user', content: ANSWER_FROM_RESULTS });
        continue;
      case 'run-tools': {
        result.toolRounds += 1;
        const text = stripToolMarkers(response.text);
        if (text) said.push(text);
        const calls = step.calls.map((call) => ids.unique(call));
        dialogue.push({ role: 'assistant', content: response.text, toolCalls: calls });
        const held: HeldCall[] = [];
        for (const admission of admitToolCalls(calls, admitted, limits)) {
          const { call } = admission;
          if (admission.run) admitted += 1;
          const context = { guard, toolsByName, round: result.toolRounds, input };
          const summary = admission.run ? approvalNeeded(call, context) : null;
          if (summary !== null) {
            held.push(hold(call, summary, context));
            continue;
          }
          const executed = admission.run ? await runGuarded(call, context) : refuse(call, admission.outcome, context);
          result.toolCalls.push(executed);
          result.toolMs += executed.durationMs;
          dialogue.push({ role: 'tool', toolCallId: call.id, content: executed.outcome.result });
        }
        // The person decides before anything more happens: the turn ends with the question.
        if (held.length > 0)
          return { ...result, text: [...said, approvalQuestion(held)].join('\n\n'), pause: { dialogue, calls: held } };
      }
    }
  }
}

/**
 * The last call of a reply that ran out of calls: the tool calls and their results as plain text
 * (no tool messages, so no provider needs tools declared), no tools offered, one instruction to
 * answer from them. Empty when even that gives nothing.
 */
async function answerFromResults(
  input: AgenticLoopInput,
  dialogue: readonly LlmMessage[],
  result: ToolLoopResult,
): Promise<string> {
  const flattened: LlmMessage[] = dialogue.map((message): LlmMessage => {
    if (message.role === 'tool') return { role: 'user', content: `Tool result: ${message.content}` };
    if (message.role === 'assistant' && message.toolCalls?.length) {
      const calls = message.toolCalls.map((call) => `${call.name}(${call.arguments})`).join('; ');
      return { role: 'assistant', content: [message.content, `(I called: ${calls})`].filter(Boolean).join('\n') };
    }
    return message;
  });
  const messages: LlmMessage[] = [
    { role: 'system', content: `${input.system}\n\n${input.context()}` },
    ...flattened,
    { role: 'user', content: ANSWER_WITHOUT_TOOLS },
  ];
  const started = input.elapsed();
  input.onModelCall?.();
  const response = await input.provider.complete(
    { messages },
    { signal: input.signal, onTextDelta: input.onTextDelta },
  );
  result.modelMs += input.elapsed() - started;
  result.modelCalls += 1;
  result.model = response.model;
  return stripToolMarkers(response.text).trim();
}

/** Streams a later round's text after a blank line, so it reads as it will be stored. */
function separated(onTextDelta: (delta: string) => void, spokeBefore: () => boolean): (delta: string) => void {
  let first = true;
  return (delta) => {
    if (!delta) return;
    if (first && spokeBefore()) onTextDelta('\n\n');
    first = false;
    onTextDelta(delta);
  };
}

/**
 * Tool-call ids unique within the reply: some models send empty ids, or reuse `call_0` in every
 * response, and a tool result must answer exactly one call.
 */
class CallIds {
  readonly #seen = new Set<string>();

  unique(call: LlmToolCall): LlmToolCall {
    let id = call.id.trim();
    if (!id || this.#seen.has(id)) {
      const base = id || 'call';
      for (let n = 2; ; n++) {
        const candidate = `${base}_${n}`;
        if (!this.#seen.has(candidate)) {
          id = candidate;
          break;
        }
      }
    }
    this.#seen.add(id);
    return id === call.id ? call : { ...call, id };
  }
}

interface RunContext {
  guard: CallGuard;
  toolsByName: ReadonlyMap<string, AnyTool>;
  round: number;
  input: AgenticLoopInput;
}

/** What the person would approve, when the call waits for them; null when it runs (or is refused) now. */
function approvalNeeded(call: LlmToolCall, { guard, toolsByName }: RunContext): string | null {
  const tool = toolsByName.get(call.name);
  if (!tool?.needsApproval || !guard.check(call).run) return null;
  return describeHeldCall(tool, call);
}

/** A call that waits: audited as waiting, announced to the stream, not run. */
function hold(call: LlmToolCall, summary: string, { round, input }: RunContext): HeldCall {
  const outcome = { status: 'ok' as const, result: `Waiting for the person's approval: ${summary}` };
  input.onAudit?.({ round, call, outcome, startedAt: input.elapsed(), durationMs: 0 });
  input.onApprovalRequested?.({ callId: call.id, tool: call.name, arguments: call.arguments, summary });
  return heldCallOf(call, summary);
}

/** A call over the tool-call limits: answered with `outcome`, audited, never run. */
function refuse(call: LlmToolCall, outcome: ToolOutcome, { round, input }: RunContext): ExecutedToolCall {
  const refused = { round, call, outcome, startedAt: input.elapsed(), durationMs: 0 };
  input.onAudit?.(refused);
  return refused;
}

async function runGuarded(
  call: LlmToolCall,
  { guard, toolsByName, round, input }: RunContext,
): Promise<ExecutedToolCall> {
  const startedAt = input.elapsed();
  const verdict = guard.check(call);
  if (!verdict.run) {
    const refused = { round, call, outcome: verdict.outcome, startedAt, durationMs: 0 };
    input.onAudit?.(refused);
    return refused;
  }
  input.onToolStart?.(call);
  const outcome = await executeToolCall(toolsByName, call, input.signal);
  guard.ran(call, outcome);
  const executed = { round, call, outcome, startedAt, durationMs: input.elapsed() - startedAt };
  input.onToolCall?.(executed);
  return executed;
}
