import type { Conversation, Message, Participant, ToolCallRecord, TurnRecord } from '../core/domain.ts';

export interface SummaryInput {
  conversation: Conversation;
  participant: Participant | null;
  turns: TurnRecord[];
  toolCalls: ToolCallRecord[];
  messages: Message[];
  model: { provider: string; model: string };
}

const ms = (value: number | null) => (value === null ? '—' : `${value} ms`);
const clip = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max)}…` : text);
const code = (value: unknown) =>
  `\`${clip(typeof value === 'string' ? value : JSON.stringify(value), 200).replaceAll('`', "'")}\``;

const toolLine = (call: ToolCallRecord) =>
  `- Tool \`${call.name}\` (round ${call.round}, ${call.status}, ${call.durationMs} ms): ` +
  `arguments ${code(call.arguments)} → ${clip(call.result, 200)}`;

/** A human-readable account of a conversation for debugging: turns, model and tool calls, latency, state changes. */
export function conversationSummary({
  conversation,
  participant,
  turns,
  toolCalls,
  messages,
  model,
}: SummaryInput): string {
  const who = participant
    ? `${participant.name ?? '(no name)'} (${participant.id}, ${participant.status})`
    : 'none (web session)';
  const lines = [
    `# Conversation ${conversation.id}`,
    '',
    `- Participant: ${who}`,
    `- Flow: ${conversation.flow}; state ${conversation.state}; sub-state ${conversation.subState ?? '—'}`,
    `- Model: ${model.provider} / ${model.model}`,
    `- Turns: ${turns.length}; messages: ${messages.length}; tool calls: ${toolCalls.length}`,
    '',
    '## Turns',
  ];
  turns.forEach((turn, index) => {
    lines.push(
      '',
      `### ${index + 1}. ${turn.startedAt.toISOString()} · ${turn.trigger} · ${turn.module} · ${turn.status}`,
    );
    // A turn records the state it started in: the state it left behind is where the next one started.
    // A timer's turn records the timer's kind instead, so it is no state to compare.
    const next = turn.trigger === 'timer' ? undefined : turns.slice(index + 1).find((t) => t.trigger !== 'timer');
    if (next && next.module !== turn.module) lines.push(`- State change: ${turn.module} → ${next.module}`);
    lines.push(
      `- Model calls: ${turn.modelCalls} (${model.provider} / ${model.model}); tool rounds: ${turn.toolRounds}`,
      `- Latency: first token ${ms(turn.firstTokenMs)}, first status ${ms(turn.timeToStatusMs)}, ` +
        `model ${ms(turn.modelMs)}, tools ${ms(turn.toolMs)}, total ${ms(turn.totalMs)}`,
    );
    if (turn.error) lines.push(`- Error: ${clip(turn.error)}`);
    for (const call of toolCalls.filter((c) => c.turnId === turn.id)) lines.push(toolLine(call));
    for (const message of messages.filter((m) => m.turnId === turn.id)) {
      const speaker = message.role === 'user' ? 'Participant' : message.role === 'assistant' ? 'Assistant' : 'System';
      lines.push(`- ${speaker}: ${clip(message.text)}`);
    }
  });
  // A change is audited in its own transaction: the turn that made it may have died before its record.
  const recorded = new Set(turns.map((turn) => turn.id));
  const unfinished = toolCalls.filter((call) => !recorded.has(call.turnId));
  if (unfinished.length > 0) lines.push('', '## Tool calls of turns that never finished', ...unfinished.map(toolLine));
  const operator = messages.filter((m) => m.source === 'operator');
  if (operator.length > 0) {
    lines.push('', '## Operator actions', ...operator.map((m) => `- ${m.createdAt.toISOString()}: ${clip(m.text)}`));
  }
  return `${lines.join('\n')}\n`;
}
