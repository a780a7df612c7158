import type { Message } from '../../core/domain.ts';
import type { AnyTool } from '../../tools/define-tool.ts';
import { describeTime } from './assistant-tools.ts';
import type { AssistantProfile } from './profiles.ts';
import { ASSISTANT_MARKERS } from './markers.ts';
import { formatRecalled } from './recall.ts';

const ASR_NOTE =
  'Messages may come from speech transcription and contain recognition errors or missing punctuation: go by ' +
  'what the person means, and ask one short clarifying question when the meaning is unclear.';
const TOOL_PROTOCOL =
  'Call tools through the tool-calling interface only (never write tool calls as text). Prefer real data from ' +
  'tools over guessing. Answer in plain text for a person: no JSON.';

/** The system message without the per-call context block (spec 003, "Build Initial Messages"). */
export function assistantSystemMessage(
  profile: AssistantProfile,
  recalled: readonly Message[],
  tools: ReadonlyArray<AnyTool>,
): string {
  const parts = [`${ASSISTANT_MARKERS.reply} ${profile.systemPrompt}`, ASR_NOTE, TOOL_PROTOCOL];
  if (recalled.length > 0) parts.push(`Relevant conversation history:\n${formatRecalled(recalled)}`);
  if (tools.length > 0) parts.push(`Tools:\n${tools.map((tool) => `- ${tool.name}: ${tool.description}`).join('\n')}`);
  return parts.join('\n\n');
}

/** Exactly one of these per model call, rebuilt each time (spec 003, "Dynamic Context Injection"). */
/** The time where the person is, when their zone is known (a participant's), else UTC. */
export function contextBlock(now: Date, location: string, timeZone: string | null = null): string {
  return `Current context:\n• Time: ${describeTime(now, timeZone ?? 'UTC')}\n• Location: ${location}`;
}

/** Short-term memory: the person's and assistant's messages of the last `windowMs`, at most `max`. */
export function recentDialogue(history: readonly Message[], now: Date, windowMs: number, max: number): Message[] {
  const since = now.getTime() - windowMs;
  return history.filter((m) => m.role !== 'system' && m.createdAt.getTime() >= since).slice(-max);
}
