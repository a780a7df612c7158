import { describeError } from '../core/errors.ts';
import type { LlmToolCall } from '../llm/llm-provider.ts';
import { describeIssues, toolError, type AnyTool, type ToolDefinition, type ToolOutcome } from './define-tool.ts';

/**
 * Runs one tool call the model proposed: unknown names, malformed JSON, invalid arguments and
 * thrown errors all become error outcomes the model can read; nothing here throws.
 */
export async function executeToolCall(
  tools: ReadonlyMap<string, AnyTool>,
  call: LlmToolCall,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const tool = tools.get(call.name) as ToolDefinition<unknown> | undefined;
  if (!tool) {
    const known = [...tools.keys()].join(', ') || 'none';
    return toolError(`unknown tool "${call.name}". Available tools: ${known}.`);
  }
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok) return toolError(`the arguments are not valid JSON (${parsed.reason}). Send a JSON object.`);
  const validated = tool.input.safeParse(parsed.value);
  if (!validated.success) return toolError(`invalid arguments for ${tool.name}: ${describeIssues(validated.error)}.`);
  try {
    const outcome = await tool.execute(validated.data, { signal });
    return typeof outcome === 'string' ? { status: 'ok', result: outcome } : outcome;
  } catch (error) {
    if (signal.aborted) throw error;
    return toolError(`${tool.name} failed: ${describeError(error)}`);
  }
}

/** Arguments as an object, or as a JSON string holding one (some models encode them twice). */
export function parseArguments(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'string' && /^\s*\{/.test(value)) return { ok: true, value: JSON.parse(value) };
    return { ok: true, value };
  } catch (error) {
    return { ok: false, reason: describeError(error) };
  }
}

/** A call's arguments as the JSON they are, for people to read; the model's text when it is not JSON. */
export function argumentsAsJson(text: string): unknown {
  const parsed = parseArguments(text);
  return parsed.ok ? parsed.value : text;
}
