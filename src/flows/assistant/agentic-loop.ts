import type { FlowRunContext } from '../../engine/flow.ts';
import { runToolLoop, type ToolLoopHooks, type ToolLoopResult } from '../../engine/tool-loop.ts';
import type { LlmMessage, LlmToolCall } from '../../llm/llm-provider.ts';
import { toolSpec, type AnyTool } from '../../tools/define-tool.ts';
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
 * Spec 003's agentic loop, guarded, as hooks on the engine's one tool loop: at most
 * `maxModelCalls` calls; every tool call of a response runs (or is refused by the `CallGuard` or
 * the tool-call limits, or waits for the person's yes) and gets exactly one result with its id;
 * exactly one context block, inside the system message, per call; the person always gets an answer.
 */
export async function runAgenticLoop(input: AgenticLoopInput): Promise<AgenticLoopResult> {
  const toolsByName = new Map(input.tools.map((tool) => [tool.name, tool]));
  const specs = input.tools.map(toolSpec);
  const guard = new CallGuard({ allowed: [...toolsByName.keys()] });
  /** What the person was already told in earlier rounds ("Let me check…"): part of the answer. */
  const said: string[] = [];
  const answer = (text: string) => [...said, text].join('\n\n');
  const ids = new CallIds();
  let nudged = false;
  let continued = false;

  const hooks: ToolLoopHooks = {
    prepareStep(dialogue, state) {
      // The last call is asked to answer from the results in hand. Its tools stay declared: some
      // providers refuse a history of tool calls without them; a call it proposes is not run.
      if (state.modelCalls === input.maxModelCalls - 1 && state.sawToolResults && !nudged) {
        nudged = true;
        dialogue.push({ role: 'user', content: ANSWER_FROM_RESULTS });
      }
      const onTextDelta = input.onTextDelta && separated(input.onTextDelta, () => said.length > 0);
      const filter = onTextDelta ? createMarkerFilter(onTextDelta) : undefined;
      return {
        messages: [{ role: 'system', content: `${input.system}\n\n${input.context()}` }, ...dialogue],
        tools: specs.length > 0 ? specs : undefined,
        onTextDelta: filter && ((delta) => filter.push(delta)),
        after: () => filter?.flush(),
      };
    },
    decide(response, state) {
      const step = decideAssistantStep(response, {
        modelCalls: state.modelCalls,
        maxModelCalls: input.maxModelCalls,
        sawToolResults: state.sawToolResults,
        nudged,
      });
      switch (step.kind) {
        case 'reply':
          return { kind: 'reply', text: answer(step.text) };
        case 'apologize':
          return { kind: 'fallback', reason: step.reason };
        case 'continue': {
          // Reasoning is never sent back (providers reject or ignore it); one note moves the model on.
          const note = continued ? undefined : CONTINUE_AFTER_THINKING;
          continued = true;
          return { kind: 'again', note };
        }
        case 'nudge':
          nudged = true;
          return { kind: 'again', note: ANSWER_FROM_RESULTS };
        case 'run-tools': {
          const text = stripToolMarkers(response.text);
          if (text) said.push(text);
          return { kind: 'run-tools', calls: step.calls.map((call) => ids.unique(call)) };
        }
      }
    },
    guardCall(call) {
      const verdict = guard.check(call);
      if (!verdict.run) return verdict;
      const tool = toolsByName.get(call.name);
      const summary = tool?.needsApproval ? describeHeldCall(tool, call) : null;
      return summary === null ? verdict : { hold: summary };
    },
    ran: (call, outcome) => guard.ran(call, outcome),
    holdText: (held) => answer(approvalQuestion(held)),
    async rescue(reason, dialogue, result) {
      // Out of calls with results in hand: one last call, without tools, answers from them.
      const sawToolResults = dialogue.some((message) => message.role === 'tool');
      const final = reason === 'round-limit' && sawToolResults ? await answerFromResults(input, dialogue, result) : '';
      if (final) return answer(final);
      // What was said along the way is an answer of sorts; only silence gets the apology.
      return said.length > 0 ? said.join('\n\n') : undefined;
    },
  };
  const result = await runToolLoop({ ...input, messages: input.dialogue, fallbackText: ASSISTANT_APOLOGY, hooks });
  if (!result.held) return result;
  const { held, ...rest } = result;
  return {
    ...rest,
    pause: { dialogue: held.messages, calls: held.calls.map(({ call, summary }) => heldCallOf(call, summary)) },
  };
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
