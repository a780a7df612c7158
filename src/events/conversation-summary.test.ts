import { describe, expect, it } from 'vitest';
import { unmeasuredTurn } from '../core/turn-record.ts';
import type { Conversation, TurnRecord } from '../core/domain.ts';
import { conversationSummary } from './conversation-summary.ts';

const conversation = {
  id: 'conv_1',
  participantId: null,
  channel: 'webhook',
  flow: 'habit-coach',
  state: 'CONVERSATION_ACTIVE',
  subState: 'FEEDBACK',
  version: 1,
  createdAt: new Date(0),
  updatedAt: new Date(0),
} as Conversation;

const turnAt = (n: number, trigger: string, module: string): TurnRecord =>
  unmeasuredTurn({
    id: `turn_${n}`,
    conversationId: conversation.id,
    inboxId: null,
    trigger,
    module,
    status: 'completed',
    error: null,
    startedAt: new Date(n * 1000),
    finishedAt: new Date(n * 1000),
    attempts: 1,
  });

const summaryOf = (turns: TurnRecord[]) =>
  conversationSummary({
    conversation,
    participant: null,
    turns,
    toolCalls: [],
    messages: [],
    model: { provider: 'offline', model: 'demo' },
  });

describe('conversationSummary', () => {
  it('reports state changes between message turns, not the kinds of the timers between them', () => {
    const summary = summaryOf([
      turnAt(1, 'message', 'INTAKE'),
      turnAt(2, 'timer', 'daily-prompt'),
      turnAt(3, 'message', 'FEEDBACK'),
      turnAt(4, 'timer', 'auto-feedback'),
      turnAt(5, 'message', 'FEEDBACK'),
    ]);
    expect(summary.match(/State change: .*/g)).toEqual(['State change: INTAKE → FEEDBACK']);
  });
});
