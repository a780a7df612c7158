import { describe, expect, it } from 'vitest';
import type { Message } from '../../core/domain.ts';
import {
  applyPollAnswer,
  DONE_POLL_QUESTION,
  donePoll,
  GO_DONE_OPTIONS,
  intensityPoll,
  openPolls,
  parsePollAnswer,
} from './polls.ts';
import { testHabitState } from '../../../test/kit/habit-state.ts';

const pollMessage = (poll = donePoll(), createdAt = new Date('2026-06-01T11:00:00Z')): Message => ({
  id: 'm1',
  conversationId: 'c',
  seq: 1,
  role: 'assistant',
  kind: 'poll',
  text: poll.question,
  poll,
  source: 'timer',
  turnId: null,
  createdAt,
});

describe('polls', () => {
  it('offers only the possible intensity moves', () => {
    expect(intensityPoll('low').options).toEqual(['Keep', 'Increase']);
    expect(intensityPoll('normal').options).toEqual(['Decrease', 'Keep', 'Increase']);
    expect(intensityPoll('high').options).toEqual(['Decrease', 'Keep']);
  });

  it.each([
    ['1', 'Done'],
    ['done', 'Done'],
    ['DONE!', 'Done'],
    ['2', 'Not yet'],
    ['yes', 'Done'],
    ['3', null],
    ['maybe later', null],
    // Names an object inherits are no synonyms (they used to throw, failing the turn).
    ['constructor', null],
    ['__proto__', null],
  ])('reads %j as %j', (reply, expected) => expect(parsePollAnswer(donePoll(), reply)).toBe(expected));

  // A vote as the Go PromptPipe recorded it (an imported study's transcript, Go's platform clients).
  const goPoll = { question: DONE_POLL_QUESTION, options: GO_DONE_OPTIONS };
  it.each([
    ['Q: Did you do it? A: Done', 'Done'],
    ['Q: Did you do it? A: Next time', 'Next time'],
    ['Q: Did you do it? A: [responded]', null], // Go's vote on another poll: it could not name the option
    ['Q: How should your next prompts feel? A: Done', null], // another question
  ])("reads Go's vote %j as %j", (reply, expected) => expect(parsePollAnswer(goPoll, reply)).toBe(expected));

  it("counts a Go vote's Done as the coach counts a Done", () => {
    const state = testHabitState();
    applyPollAnswer(state, [pollMessage(goPoll)], 'Q: Did you do it? A: Done');
    expect(state.profile.successCount).toBe(1);
  });

  it('counts Done once per poll', () => {
    const state = testHabitState();
    applyPollAnswer(state, [pollMessage()], 'Done');
    expect(state.profile.successCount).toBe(1);
    applyPollAnswer(state, [pollMessage()], '1');
    expect(state.profile.successCount).toBe(1);
    const later = testHabitState({ profile: state.profile, startedAt: new Date('2026-06-02T12:00:00Z') });
    applyPollAnswer(later, [pollMessage(donePoll(), new Date('2026-06-02T11:00:00Z'))], 'done');
    expect(later.profile.successCount).toBe(2);
  });

  const userMessage = (text: string, seq: number): Message => ({
    ...pollMessage(),
    id: `u${seq}`,
    seq,
    role: 'user',
    kind: 'text',
    poll: null,
    text,
  });

  it('ignores a poll the participant already answered, but not one they only chatted after', () => {
    const state = testHabitState();
    applyPollAnswer(state, [pollMessage(), userMessage('done', 2)], 'Done');
    expect(state.profile.successCount).toBe(0);
    applyPollAnswer(state, [pollMessage(), userMessage('hi there', 2)], 'Done');
    expect(state.profile.successCount).toBe(1);
  });

  it('lets the two polls of one prompt be answered one after the other, keeping their numbers', () => {
    const intensity = { ...pollMessage(intensityPoll('normal')), id: 'm2', seq: 2 };
    const afterDone = [pollMessage(), intensity, userMessage('1', 3)];
    expect(
      openPolls(afterDone, new Date('2026-06-01T12:00:00Z'))
        .flat()
        .map((option) => `${option.number} ${option.option}`),
    ).toEqual(['3 Decrease', '4 Keep', '5 Increase']);
    const state = testHabitState();
    applyPollAnswer(state, afterDone, '5');
    expect(state.profile.intensity).toBe('high');
  });

  it('reads the number recorded with a poll, even when the rest of its batch is out of the history window', () => {
    const intensity = { ...pollMessage({ ...intensityPoll('normal'), firstNumber: 3 }), id: 'm2', seq: 2 };
    expect(
      openPolls([intensity], new Date('2026-06-01T12:00:00Z'))
        .flat()
        .map((option) => option.number),
    ).toEqual([3, 4, 5]);
    const state = testHabitState();
    applyPollAnswer(state, [intensity], '1'); // "1" was Done, in the poll no longer in view: not Decrease
    expect(state.profile.intensity).toBe('normal');
  });

  it('a newer poll of the same question replaces an unanswered older one', () => {
    const newer = { ...pollMessage(donePoll(), new Date('2026-06-02T11:00:00Z')), id: 'm3', seq: 3 };
    expect(
      openPolls([pollMessage(), newer], new Date('2026-06-02T12:00:00Z')).map((options) => options[0]!.messageId),
    ).toEqual(['m3']);
  });

  it('closes a poll a day after it was sent: a later "yes" answers something else', () => {
    const poll = pollMessage(donePoll(), new Date('2026-06-01T11:00:00Z'));
    const hourLater = testHabitState({ startedAt: new Date('2026-06-01T12:00:00Z') });
    applyPollAnswer(hourLater, [poll], 'yes');
    expect(hourLater.profile.successCount).toBe(1);
    const daysLater = testHabitState({ startedAt: new Date('2026-06-03T12:00:00Z') });
    applyPollAnswer(daysLater, [poll], 'yes');
    expect(daysLater.profile.successCount).toBe(0);
    expect(openPolls([poll], new Date('2026-06-02T11:00:00Z'))).toEqual([]);
  });

  it('reads an answer against the open polls, oldest first', () => {
    const state = testHabitState();
    const intensity = { ...pollMessage(intensityPoll('normal')), id: 'm2', seq: 2 };
    applyPollAnswer(state, [pollMessage(), intensity], 'done');
    expect(state.profile).toMatchObject({ successCount: 1, intensity: 'normal' });
    applyPollAnswer(state, [pollMessage(), intensity], 'increase');
    expect(state.profile.intensity).toBe('high');
  });

  it('numbers the options of every open poll consecutively, as the text rendering shows them', () => {
    const state = testHabitState();
    const intensity = { ...pollMessage(intensityPoll('normal')), id: 'm2', seq: 2 };
    applyPollAnswer(state, [pollMessage(), intensity], '5');
    expect(state.profile).toMatchObject({ successCount: 0, intensity: 'high' });
    applyPollAnswer(state, [pollMessage(), intensity], '3');
    expect(state.profile.intensity).toBe('normal');
    applyPollAnswer(state, [pollMessage(), intensity], '1');
    expect(state.profile).toMatchObject({ successCount: 1, intensity: 'normal' });
    applyPollAnswer(state, [pollMessage(), intensity], '6');
    expect(state.profile).toMatchObject({ successCount: 1, intensity: 'normal' });
  });

  it('moves intensity one step, clamped', () => {
    const state = testHabitState();
    applyPollAnswer(state, [pollMessage(intensityPoll('normal'))], 'Increase');
    expect(state.profile.intensity).toBe('high');
    applyPollAnswer(state, [pollMessage(intensityPoll('high'))], 'more');
    expect(state.profile.intensity).toBe('high');
    applyPollAnswer(state, [pollMessage(intensityPoll('high'))], '1');
    expect(state.profile.intensity).toBe('normal');
  });
});
