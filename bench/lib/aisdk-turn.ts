// The AI SDK peers' shared parts: the scripted mock model and the two tools, the same for both.
import { generateText, stepCountIs, tool, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { PROFILE_ARGS, REPLY, SCHEDULER_ARGS, wantsTools } from './turn-script.ts';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};
let calls = 0;
const model = new MockLanguageModelV3({
  doGenerate: async (options) => {
    const last = options.prompt.at(-1)!;
    if (wantsTools(last.role)) {
      calls += 1;
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `a${calls}`,
            toolName: 'save_user_profile',
            input: JSON.stringify(PROFILE_ARGS),
          },
          { type: 'tool-call', toolCallId: `b${calls}`, toolName: 'scheduler', input: JSON.stringify(SCHEDULER_ARGS) },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    }
    return {
      content: [{ type: 'text', text: REPLY }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  },
});
// The mock records every call; a benchmark must not grow with them.
const generate = model.doGenerate;
model.doGenerate = async (options) => {
  const result = await generate(options);
  model.doGenerateCalls.length = 0;
  return result;
};

/** One turn of the AI SDK tool loop (generateText, up to 10 steps); `profile` is updated in place. */
export function runAiSdkTurn(messages: ModelMessage[], profile: Record<string, string>) {
  return generateText({
    model,
    messages,
    stopWhen: stepCountIs(10),
    tools: {
      save_user_profile: tool({
        inputSchema: z.object({
          habit_domain: z.string().optional(),
          motivational_frame: z.string().optional(),
          preferred_time: z.string().optional(),
        }),
        execute: async (input) => {
          Object.assign(profile, input);
          return 'Saved.';
        },
      }),
      scheduler: tool({
        inputSchema: z.object({ action: z.enum(['create', 'list', 'delete']) }),
        execute: async () => 'No schedules.',
      }),
    },
  });
}
