import type { LanguageModelV3FunctionTool, LanguageModelV3Message, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { LlmMessage, LlmToolSpec } from './llm-provider.ts';

/**
 * Our messages as the AI SDK's prompt, which `@ai-sdk/openai-compatible` turns into the
 * OpenAI wire format: tool calls become `tool_calls` with the arguments text (valid JSON is
 * sent exactly as the model produced it), tool results become `role: "tool"` messages.
 */
export function toModelPrompt(messages: readonly LlmMessage[]): LanguageModelV3Prompt {
  const toolNames = new Map<string, string>();
  return messages.map((message): LanguageModelV3Message => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'user':
        return { role: 'user', content: [{ type: 'text', text: message.content }] };
      case 'assistant':
        for (const call of message.toolCalls ?? []) toolNames.set(call.id, call.name);
        return { role: 'assistant', content: assistantParts(message) };
      case 'tool':
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: message.toolCallId,
              // The wire format carries only the id; the SDK's type wants the name too.
              toolName: toolNames.get(message.toolCallId) ?? '',
              output: { type: 'text', value: message.content },
            },
          ],
        };
    }
  });
}

function assistantParts(
  message: Extract<LlmMessage, { role: 'assistant' }>,
): Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] {
  const text = message.content === '' ? [] : [{ type: 'text' as const, text: message.content }];
  const calls = (message.toolCalls ?? []).map((call) => ({
    type: 'tool-call' as const,
    toolCallId: call.id,
    toolName: call.name,
    input: call.arguments,
  }));
  return [...text, ...calls];
}

export function toModelTools(tools: readonly LlmToolSpec[] | undefined): LanguageModelV3FunctionTool[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters as LanguageModelV3FunctionTool['inputSchema'],
  }));
}
