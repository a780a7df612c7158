import { describe, expect, it } from 'vitest';
import type { Message, Poll } from '../../core/domain.ts';
import { buildModelMessages } from '../../engine/model-context.ts';
import { describeProfile } from './habit-turn-state.ts';
import { offlineHabitStep } from './offline-policy.ts';
import { applyPollAnswer, donePoll, intensityPoll } from './polls.ts';
import { testHabitState } from '../../../test/kit/habit-state.ts';

const SENT = new Date('2026-06-02T11:00:00Z');
const tools = [{ name: 'save_user_profile', description: '', parameters: {} }];
let seq = 0;

const message = (role: 'user' | 'assistant', text: string, poll: Poll | null = null, createdAt = SENT): Message => ({
  id: `m${++seq}`,
  conversationId: 'c',
  seq,
  role,
  kind: poll ? 'poll' : 'text',
  text,
  poll,
  source: role === 'user' ? 'participant' : poll ? 'timer' : 'model',
  turnId: null,
  createdAt,
});
const polls = (createdAt = SENT): Message[] => [
  message('assistant', donePoll().question, { ...donePoll(), firstNumber: 1 }, createdAt),
  message('assistant', intensityPoll('normal').question, { ...intensityPoll('normal'), firstNumber: 3 }, createdAt),
];

/**
 * The offline model's step for `reply` after `history`, on the request the habit flow makes: the
 * poll answer applied to the profile first (polls.ts), then the feedback module's system messages
 * and the transcript as the engine shows it to the model (engine/model-context).
 */
function replyTo(history: Message[], reply: string, intake = false) {
  const state = testHabitState({ startedAt: new Date('2026-06-02T12:00:00Z') });
  if (!intake)
    state.profile.fields = { habit_domain: 'walking', prompt_anchor: 'after breakfast', preferred_time: '07:00' };
  applyPollAnswer(state, history, reply);
  const context = [
    'Context for this turn (from the system, not the participant):',
    describeProfile(state.profile),
    ...(intake ? [] : ['Last prompt sent: "After breakfast, spend two minutes on walking."']),
  ].join('\n\n');
  const system = [
    { role: 'system' as const, content: 'You are a friendly habit coach.' },
    { role: 'system' as const, content: context },
  ];
  const input = { kind: 'message' as const, text: reply, inboxId: 'in1' };
  return { step: offlineHabitStep({ messages: buildModelMessages(system, history, input, 50), tools }), state };
}

describe('the offline habit coach on a poll answer', () => {
  it('acknowledges "1" as the Done the flow counted, without asking for "done"', () => {
    const { step, state } = replyTo(polls(), '1');
    expect(state.profile.successCount).toBe(1);
    expect(step).toEqual({
      text: 'Wonderful, well done! Small steps add up. See you at the next prompt.',
      toolCalls: [],
    });
  });

  it('meets "2" (Not yet) kindly and asks what got in the way', () => {
    expect(replyTo(polls(), '2').step.text).toBe("That's okay, it happens. What got in the way?");
  });

  it.each([
    ['4', 'Got it, your prompts stay at normal intensity.'],
    ['keep', 'Got it, your prompts stay at normal intensity.'],
    ['3', 'Got it, your prompts are now at low intensity.'],
    ['5', 'Got it, your prompts are now at high intensity.'],
    ['more', 'Got it, your prompts are now at high intensity.'],
  ])('acknowledges %j, after "1" answered the other poll, with the intensity it set', (reply, text) => {
    expect(replyTo([...polls(), message('user', '1')], reply).step.text).toBe(text);
  });

  it('reads a number against the newest poll of a question, not an older one', () => {
    const yesterday = polls(new Date('2026-06-01T11:00:00Z'));
    const today = [message('assistant', donePoll().question, { ...donePoll(), firstNumber: 1 })];
    expect(replyTo([...yesterday, message('user', '1'), ...today], '1').step.text).toMatch(/well done/);
  });

  it('takes a number no open poll offers for no answer, and then promises no "done" count', () => {
    const answered = [...polls(), message('user', '1'), message('user', '4')];
    const { step, state } = replyTo(answered, '1');
    expect(state.profile.successCount).toBe(0);
    expect(step.text).toBe('Thanks for the update! Tell me how your habit went, or what got in the way.');
  });

  it('still offers "done" while the "Did you do it?" poll is open', () => {
    expect(replyTo(polls(), 'hmm').step.text).toMatch(/Reply "done" when you have done your habit/);
  });

  it('takes the reply to "What got in the way?" as the barrier', () => {
    const asked = [
      ...polls(),
      message('user', '2'),
      message('assistant', "That's okay, it happens. What got in the way?"),
    ];
    expect(replyTo(asked, 'too tired').step.toolCalls).toEqual([
      { name: 'save_user_profile', arguments: expect.objectContaining({ last_barrier: 'too tired' }) },
    ]);
  });

  it('reads a new time as a change of the daily prompt: saves it and lists the schedules to move them', () => {
    expect(replyTo(polls(), '6pm').step).toEqual({
      text: '',
      toolCalls: [
        { name: 'save_user_profile', arguments: { preferred_time: '18:00' } },
        { name: 'scheduler', arguments: { action: 'list' } },
      ],
    });
  });

  it('takes a time in the answer to "What got in the way?" as part of the barrier, not a new time', () => {
    const asked = [
      ...polls(),
      message('user', '2'),
      message('assistant', "That's okay, it happens. What got in the way?"),
    ];
    expect(replyTo(asked, 'busy at 6pm').step.toolCalls).toEqual([
      { name: 'save_user_profile', arguments: expect.objectContaining({ last_barrier: 'busy at 6pm' }) },
    ]);
  });

  it('in intake, acknowledges the answer and asks the next question instead of saving "1" as a field', () => {
    expect(replyTo(polls(), '1', true).step).toEqual({
      text: expect.stringMatching(/^Wonderful, well done!.* What small daily habit would you like to build\?/),
      toolCalls: [],
    });
  });
});
