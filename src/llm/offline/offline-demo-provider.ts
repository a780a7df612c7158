import type { LlmProvider, LlmRequest, LlmResponse } from '../llm-provider.ts';

export const OFFLINE_NOTICE = 'offline demo model — configure LLM_BASE_URL for a real model';

/** What the offline model answers: text, tool calls, or both (like a real model). */
export interface OfflineStep {
  text: string;
  toolCalls: Array<{ name: string; arguments: Record<string, unknown> }>;
}

/**
 * A flow's rules for the offline model (each flow module brings its own): the step for a request
 * of that flow, or null when the request is not the flow's.
 */
export type OfflinePolicy = (request: LlmRequest) => OfflineStep | null;

/**
 * How a flow marks the requests it makes (`[service-desk:decide]`, `[assistant:route]`) at the
 * start of its first system message, so that its policy recognises them; harmless to a real model.
 */
export const FLOW_MARKER = /^\[[a-z][a-z-]*:[a-z][a-z-]*\]/;

/** The first system message of a request: where flows put their marker. */
export function systemOf(request: LlmRequest): string {
  return request.messages.find((message) => message.role === 'system')?.content ?? '';
}

/** The role whose marker (from a flow's table of markers, defined once) starts `system`, if any. */
export function markedRole<R extends string>(markers: Readonly<Record<R, string>>, system: string): R | undefined {
  return (Object.keys(markers) as R[]).find((role) => system.startsWith(markers[role]));
}

const UNRECOGNISED: OfflineStep = {
  text: 'The offline demo model has no rules for this conversation. Configure LLM_BASE_URL for a real model.',
  toolCalls: [],
};

/** The step the first policy that recognises the request gives. */
export function offlineStep(policies: readonly OfflinePolicy[], request: LlmRequest): OfflineStep {
  for (const policy of policies) {
    const step = policy(request);
    if (step) return step;
  }
  return UNRECOGNISED;
}

/**
 * A deterministic, rule-based stand-in for a model, so the server does its whole job with no API
 * key and no network. It speaks the provider interface, tool calls included, and is never
 * presented as an LLM: its name and model id say what it is. Its rules are the flows' own.
 */
export function createOfflineDemoProvider(policies: readonly OfflinePolicy[]): LlmProvider {
  let callId = 0;
  return {
    name: 'offline-demo',
    model: 'offline-demo',
    async complete(request, options) {
      options?.signal?.throwIfAborted();
      const step = offlineStep(policies, request);
      if (step.text) options?.onTextDelta?.(step.text);
      const toolCalls = step.toolCalls.map((call) => ({
        id: `offline_${++callId}`,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
      }));
      return {
        text: step.text,
        toolCalls,
        finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop',
        model: 'offline-demo',
      } satisfies LlmResponse;
    },
  };
}
