/* eslint-disable @typescript-eslint/no-explicit-any --
   OpenAI request bodies are read loosely, as the fake server parses them */
import type { LlmMessage, LlmRequest } from '../../src/llm/llm-provider.ts';
import { FLOW_MODULES } from '../../src/flows/registry.ts';
import { offlineStep } from '../../src/llm/offline/offline-demo-provider.ts';
import type { ChatRequestBody, FakeAnswer } from '../../test/kit/fake-openai-server.ts';

/**
 * The soak's model: the fake OpenAI-compatible server (real HTTP, SSE streaming, tool-call
 * fragments) answering with the offline demo model's rules, so every flow does its whole job
 * (intake, schedules, daily prompts, the assistant's tools, the service desk) through the real
 * provider adapter. A small share of calls is refused with 429 and `retry-after: 1`, as providers do.
 */
export function soakModelScript(options: {
  rateLimitedShare: number;
  random?: () => number;
}): (body: ChatRequestBody) => FakeAnswer {
  const random = options.random ?? Math.random;
  const policies = FLOW_MODULES.flatMap((module) => module.offlinePolicy ?? []);
  return (body) => {
    if (random() < options.rateLimitedShare) {
      return {
        fault: 'status',
        status: 429,
        retryAfter: '1',
        body: {
          error: { message: 'Rate limit reached (soak)', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' },
        },
      };
    }
    const request = toLlmRequest(body);
    const step = offlineStep(policies, request);
    return {
      text: step.text,
      toolCalls: step.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments })),
      chunkSize: 24,
    };
  };
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('')
      : '';

/** An OpenAI chat-completions body as the provider port's request (what the offline rules read). */
export function toLlmRequest(body: ChatRequestBody): LlmRequest {
  const messages: LlmMessage[] = (Array.isArray(body.messages) ? body.messages : []).map(
    (message: Record<string, any>): LlmMessage => {
      switch (message.role) {
        case 'assistant':
          return {
            role: 'assistant',
            content: textOf(message.content),
            toolCalls: (message.tool_calls ?? []).map((call: Record<string, any>) => ({
              id: String(call.id),
              name: String(call.function?.name),
              arguments: String(call.function?.arguments ?? '{}'),
            })),
          };
        case 'tool':
          return { role: 'tool', toolCallId: String(message.tool_call_id), content: textOf(message.content) };
        case 'system':
        case 'developer':
          return { role: 'system', content: textOf(message.content) };
        default:
          return { role: 'user', content: textOf(message.content) };
      }
    },
  );
  const tools = Array.isArray(body.tools)
    ? body.tools.map((tool: Record<string, any>) => ({
        name: String(tool.function?.name),
        description: String(tool.function?.description ?? ''),
        parameters: tool.function?.parameters ?? {},
      }))
    : undefined;
  return {
    messages,
    ...(tools && tools.length > 0 ? { tools } : {}),
    ...(typeof body.model === 'string' ? { model: body.model } : {}),
  };
}
