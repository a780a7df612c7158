import type { LlmMessage, LlmRequest } from '../../llm/llm-provider.ts';
import { markedRole, systemOf, type OfflineStep } from '../../llm/offline/offline-demo-provider.ts';
import { ASSISTANT_MARKERS } from './markers.ts';

/**
 * The offline demo model's assistant roles (decision 006), read from the marker the flow puts at
 * the start of its system messages: a keyword profile router, a keyword recall extractor, and a
 * rule-based agent that calls the built-in tools and words their results. Deterministic.
 */
export function offlineAssistantStep(request: LlmRequest): OfflineStep | null {
  const system = systemOf(request);
  const role = markedRole(ASSISTANT_MARKERS, system);
  if (!role) return null;
  const said = lastUserText(request.messages);
  if (role === 'route') return { text: routeByKeywords(said), toolCalls: [] };
  if (role === 'recall') return { text: JSON.stringify({ keywords: recallKeywords(said) }), toolCalls: [] };
  const last = request.messages.at(-1);
  if (last?.role === 'tool' || (last?.role === 'user' && last.content.startsWith('Answer my request now')))
    return { text: fromToolResults(request.messages), toolCalls: [] };
  const offered = new Set((request.tools ?? []).map((tool) => tool.name));
  const call = chooseTool(said, offered);
  if (call) return { text: '', toolCalls: [call] };
  return { text: chat(said, system), toolCalls: [] };
}

const lower = (text: string) => text.toLowerCase();
/** The loop's own notes to the model (agentic-loop.ts), not something the person said. */
const isLoopNote = (text: string) =>
  text.startsWith('Answer my request now') || text.startsWith('Go on: answer my request now');

function lastUserText(messages: LlmMessage[]): string {
  return [...messages].reverse().find((m) => m.role === 'user' && !isLoopNote(m.content))?.content ?? '';
}

function routeByKeywords(request: string): string {
  // Redaction labels ("[email]", "[api-token]") say nothing about the topic.
  const said = request.replace(/\[[a-z-]+\]/g, ' ');
  if (
    /\b(code|bug|error|build|deploy|function|api|typescript|javascript|python|sql|git|server|compile|regex)\b/.test(
      lower(said),
    )
  )
    return 'developer';
  if (
    /\b(meeting|e-?mail|client|customer|invoice|budget|revenue|quarter|report|colleague|boss|contract)\b/.test(
      lower(said),
    )
  )
    return 'business';
  return 'life';
}

const STOP_WORDS = new Set(
  'a an and are about did do does earlier i in is it me my of on or remember said say talk talked tell the to ' +
    'was we what when where which who you your last time before mentioned told'.split(' '),
);

function recallKeywords(said: string): string[] {
  if (!/\b(remember|earlier|before|did i|last time|what did|told you|we talked|mentioned|recall)\b/.test(lower(said)))
    return [];
  return (lower(said).match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((word) => word.length > 2 && !STOP_WORDS.has(word))
    .slice(0, 5);
}

function chooseTool(said: string, offered: ReadonlySet<string>): OfflineStep['toolCalls'][number] | null {
  const text = lower(said);
  const expression = arithmeticIn(said);
  const pick = (name: string, args: Record<string, unknown>) => (offered.has(name) ? { name, arguments: args } : null);
  if (expression) return pick('calculator', { expression: expression.replace(/x/g, '*') });
  if (/\b(what time|what's the time|the time is|what day|today's date|what date)\b/.test(text))
    return pick('current_time', {});
  if (/\b(list|show|what are|read)\b.*\bnotes?\b/.test(text)) return pick('list_notes', {});
  const deletion = /\b(delete|remove)\b.*\b(note_\w+)/.exec(said);
  if (deletion) return pick('delete_note', { id: deletion[2] });
  const note = /^(?:please\s+)?(?:note|remember that|remind me to|add a note:?)\s*:?\s*(.+)$/i.exec(said.trim());
  if (note) return pick('add_note', { text: note[1] });
  const keywords = recallKeywords(said);
  if (keywords.length > 0) return pick('recall_conversation', { keywords });
  return null;
}

/** A sum in the text ("what is 1,250 * 12?", "2^10", "1e3 / 4"), not a phone number or a date. */
function arithmeticIn(said: string): string | undefined {
  const number = String.raw`[-+(]*\d[\d.,]*(?:e[+-]?\d+)?\)*`;
  const found = said.match(new RegExp(`${number}(?:\\s*[-+*/x×÷^%]\\s*${number})+`, 'i'))?.[0].replace(/[.,]+$/, '');
  if (!found) return undefined;
  // Digits joined only by dashes (415-555-0100, 2026-11-23) are not a sum.
  if (/^[\d\s-]+$/.test(found) && !/\s-\s/.test(found)) return undefined;
  return found;
}

/** The tools' results in words; a failed tool is owned up to, its raw error is not shown. */
function fromToolResults(messages: LlmMessage[]): string {
  const results = messages
    .filter((m) => m.role === 'tool')
    .slice(-3)
    .map((m) => m.content);
  if (results.length === 0) return "I'm not sure how to help with that one.";
  return results
    .map((result) => (result.startsWith('Error:') ? "I couldn't do that one, sorry (the tool refused it)." : result))
    .join('\n');
}

function chat(said: string, system: string): string {
  const history = /Relevant conversation history:\n([\s\S]*?)(?:\n\n|$)/.exec(system)?.[1];
  if (history) return `Here is what I found from earlier:\n${history}`;
  if (said.startsWith('['))
    return (
      "Hi! I'm the assistant (offline demo model). I can do arithmetic, tell the time, keep notes " +
      'and recall what we talked about.'
    );
  return (
    'I\'m the offline demo model, so I can only do arithmetic ("what is 12 * 7"), tell the time, keep ' +
    'notes ("note: buy milk", "list my notes") and recall earlier messages ("what did I say about milk?"). Set ' +
    'LLM_BASE_URL for a real model.'
  );
}
