import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import type { LlmProvider, LlmRequest, LlmResponse, LlmToolCall } from './llm-provider.ts';

/** One scripted model answer. */
export interface ScriptedStep {
  text?: string;
  /** Reasoning the model "thought" (not streamed as text). */
  reasoning?: string;
  /** `arguments` objects are JSON-stringified; strings are passed through raw (malformed JSON too). */
  toolCalls?: Array<{ name: string; arguments: unknown; id?: string }>;
  /** Wait this long (on the clock) before answering; an abort during the wait rejects. */
  delayMs?: number;
  /** Thrown instead of answering (after the delay). */
  error?: Error;
  /** Wait this long (on the clock) between streamed text pieces, like a model generating. */
  streamDelayMs?: number;
}

export type Script =
  readonly ScriptedStep[] | ((request: LlmRequest, callIndex: number) => ScriptedStep | Promise<ScriptedStep>);

export interface ScriptedProviderOptions {
  /** The model id reported. Default `scripted`. */
  model?: string;
  /** For `delayMs`; defaults to real time. */
  clock?: Clock;
  /** Keep a copy of every request in `requests` (default true; a benchmark turns it off). */
  recordRequests?: boolean;
  /** How many pieces a text is streamed in (default 3; a real model streams about one a word). */
  deltas?: number;
}

export interface ScriptedProvider extends LlmProvider {
  /** Every request received, in order (snapshots: later changes by the caller do not show). */
  readonly requests: LlmRequest[];
}

/** A model for tests: answers from a script, streams text in a few deltas, records requests. */
export function createScriptedProvider(script: Script, options: ScriptedProviderOptions = {}): ScriptedProvider {
  const clock = options.clock ?? systemClock;
  const model = options.model ?? 'scripted';
  const requests: LlmRequest[] = [];
  let calls = 0;
  return {
    name: 'scripted',
    model,
    requests,
    async complete(request, callOptions = {}) {
      const signal = callOptions.signal;
      signal?.throwIfAborted();
      const callIndex = calls++;
      if (options.recordRequests !== false) requests.push(structuredClone(request));
      const step = await nextStep(script, request, callIndex);
      if (step.delayMs) await clock.sleep(step.delayMs, signal);
      signal?.throwIfAborted();
      if (step.error) throw step.error;
      for (const [index, delta] of splitText(step.text ?? '', options.deltas).entries()) {
        if (index > 0 && step.streamDelayMs) await clock.sleep(step.streamDelayMs, signal);
        callOptions.onTextDelta?.(delta);
      }
      return toResponse(step, callIndex, request.model ?? model);
    },
  };
}

async function nextStep(script: Script, request: LlmRequest, callIndex: number): Promise<ScriptedStep> {
  if (typeof script === 'function') return script(request, callIndex);
  const step = (script as readonly ScriptedStep[])[callIndex];
  if (!step)
    throw new Error(`scripted provider: the script has ${script.length} steps but call #${callIndex + 1} was made`);
  return step;
}

function toResponse(step: ScriptedStep, callIndex: number, model: string): LlmResponse {
  const toolCalls: LlmToolCall[] = (step.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${callIndex + 1}_${index + 1}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
  return {
    text: step.text ?? '',
    toolCalls,
    finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
    model,
    ...(step.reasoning ? { reasoning: step.reasoning } : {}),
  };
}

/** Up to `count` roughly equal pieces, split on code points so no character is broken. */
export function splitText(text: string, count = 3): string[] {
  // Without surrogate pairs a code point is a UTF-16 unit: the string is cut as it is.
  const characters = /[\uD800-\uDFFF]/.test(text) ? Array.from(text) : text;
  if (characters.length === 0) return [];
  const pieces = Number.isFinite(count) && count >= 1 ? Math.floor(count) : 1;
  const size = Math.ceil(characters.length / pieces);
  const parts: string[] = [];
  for (let start = 0; start < characters.length; start += size) {
    const part = characters.slice(start, start + size);
    parts.push(typeof part === 'string' ? part : part.join(''));
  }
  return parts;
}
