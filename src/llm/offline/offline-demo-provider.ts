import type { LlmProvider, LlmResponse } from '../llm-provider.ts';
import { offlineHabitPrompt, offlineHabitStep } from './habit-policy.ts';
import { offlineDeskStep } from './desk-policy.ts';
import { offlineAssistantStep } from './assistant-policy.ts';

export const OFFLINE_NOTICE = 'offline demo model — configure LLM_BASE_URL for a real model';

/**
 * A deterministic, rule-based stand-in for a model, so the server does its whole job with no API
 * key and no network. It speaks the provider interface, tool calls included, and is never
 * presented as an LLM: its name and model id say what it is.
 */
export function createOfflineDemoProvider(): LlmProvider {
  let callId = 0;
  return {
    name: 'offline-demo',
    model: 'offline-demo',
    async complete(request, options) {
      options?.signal?.throwIfAborted();
      const step = offlineDeskStep(request) ?? offlineAssistantStep(request) ?? (request.tools?.length ? offlineHabitStep(request) : { text: offlineHabitPrompt(request), toolCalls: [] });
      if (step.text) options?.onTextDelta?.(step.text);
      const toolCalls = step.toolCalls.map((call) => ({ id: `offline_${++callId}`, name: call.name, arguments: JSON.stringify(call.arguments) }));
      return { text: step.text, toolCalls, finishReason: toolCalls.length > 0 ? 'tool-calls' : 'stop', model: 'offline-demo' } satisfies LlmResponse;
    },
  };
}
