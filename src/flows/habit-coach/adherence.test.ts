import { describe, expect, it } from 'vitest';
import type { Message, Poll } from '../../core/domain.ts';
import { currentStreak, pollAnswers, promptOutcomes } from './adherence.ts';
import { donePoll, intensityPoll } from './polls.ts';
import { adherenceCalendar, dailySeries } from './study-series.ts';

/** A transcript built message by message, seq in order. */
function transcript() {
  const messages: Message[] = [];
  const add = (at: string, fields: Partial<Message>) =>
    messages.push({
      id: `m${messages.length + 1}`,
      conversationId: 'c1',
      seq: messages.length + 1,
      role: 'assistant',
      kind: 'text',
      text: '',
      poll: null,
      source: 'timer',
      turnId: null,
      createdAt: new Date(at),
      ...fields,
    });
  const poll = (at: string, value: Poll, firstNumber: number) =>
    add(at, { kind: 'poll', text: value.question, poll: { ...value, firstNumber } });
  return {
    messages,
    /** What the daily prompt timer sends: the prompt, the done poll, maybe the intensity poll. */
    prompt(at: string, withIntensity = false) {
      add(at, { text: 'After coffee, walk around the block.' });
      poll(at, donePoll(), 1);
      if (withIntensity) poll(at, intensityPoll('normal'), 3);
    },
    reply: (at: string, text: string) => add(at, { role: 'user', source: 'participant', text }),
  };
}

/** Participant A's week (Toronto is UTC-4 in June): done, not yet, silence, done late in the evening, done, open. */
function weekOfA() {
  const t = transcript();
  t.prompt('2026-06-01T13:00:00Z', true);
  t.reply('2026-06-01T13:30:00Z', '1');
  t.reply('2026-06-01T13:31:00Z', '4');
  t.prompt('2026-06-02T13:00:00Z');
  t.reply('2026-06-02T20:00:00Z', 'Not yet');
  t.prompt('2026-06-03T13:00:00Z');
  t.prompt('2026-06-04T13:00:00Z');
  t.reply('2026-06-05T01:00:00Z', 'done'); // June 4, 21:00 in Toronto; June 5 in UTC
  t.prompt('2026-06-05T13:00:00Z');
  t.reply('2026-06-05T14:00:00Z', 'yes');
  t.prompt('2026-06-06T13:00:00Z');
  return t.messages;
}
const NOW = new Date('2026-06-06T15:00:00Z');

describe('poll answers and prompt outcomes, counted by hand', () => {
  it('reads each reply as the coach did: by number across the batch, by label, by synonym; once per poll', () => {
    const answers = pollAnswers(weekOfA());
    expect(answers.map((answer) => [answer.answer.text, answer.poll.poll!.question, answer.option])).toEqual([
      ['1', 'Did you do it?', 'Done'],
      ['4', 'How should your next prompts feel?', 'Keep'],
      ['Not yet', 'Did you do it?', 'Not yet'],
      ['done', 'Did you do it?', 'Done'],
      ['yes', 'Did you do it?', 'Done'],
    ]);
  });

  it('leaves a poll unanswered after 24 hours, and a newer poll of the same question replaces an older one', () => {
    const late = transcript();
    late.prompt('2026-06-01T13:00:00Z');
    late.reply('2026-06-02T13:00:01Z', '1');
    expect(pollAnswers(late.messages)).toEqual([]);

    const replaced = transcript();
    replaced.prompt('2026-06-01T13:00:00Z');
    replaced.prompt('2026-06-01T20:00:00Z');
    replaced.reply('2026-06-01T21:00:00Z', '1');
    replaced.reply('2026-06-01T21:01:00Z', '1');
    const answers = pollAnswers(replaced.messages);
    expect(answers.map((answer) => answer.poll.createdAt.toISOString())).toEqual(['2026-06-01T20:00:00.000Z']);
  });

  it('gives each prompt its text, its first reply within the day and whether it was done; the streak', () => {
    const outcomes = promptOutcomes(weekOfA());
    expect(
      outcomes.map((outcome) => [
        outcome.sentAt.toISOString().slice(0, 10),
        outcome.prompt?.text,
        outcome.repliedAt?.toISOString() ?? null,
        outcome.answer?.option ?? null,
        outcome.done,
      ]),
    ).toEqual([
      ['2026-06-01', 'After coffee, walk around the block.', '2026-06-01T13:30:00.000Z', 'Done', true],
      ['2026-06-02', 'After coffee, walk around the block.', '2026-06-02T20:00:00.000Z', 'Not yet', false],
      ['2026-06-03', 'After coffee, walk around the block.', null, null, false],
      ['2026-06-04', 'After coffee, walk around the block.', '2026-06-05T01:00:00.000Z', 'Done', true],
      ['2026-06-05', 'After coffee, walk around the block.', '2026-06-05T14:00:00.000Z', 'Done', true],
      ['2026-06-06', 'After coffee, walk around the block.', null, null, false],
    ]);
    // The open prompt of June 6 neither counts nor breaks the streak; June 5 and 4 were done, June 3 was not.
    expect(currentStreak(outcomes, NOW)).toBe(2);
    // A day later that prompt closed unanswered: the streak is broken.
    expect(currentStreak(outcomes, new Date('2026-06-07T13:00:00Z'))).toBe(0);
    expect(currentStreak([], NOW)).toBe(0);
  });
});

describe('the per-day series and the calendar, counted by hand', () => {
  const a = weekOfA();
  const b = transcript();
  b.reply('2026-06-04T10:00:00Z', 'hi');
  const subjects = [
    { enrolledAt: new Date('2026-06-01T12:00:00Z'), transcript: a },
    { enrolledAt: new Date('2026-06-03T03:00:00Z'), transcript: b.messages }, // June 2, 23:00 in Toronto
  ].map(({ enrolledAt, transcript: messages }) => ({
    enrolledAt,
    outcomes: promptOutcomes(messages),
    replies: messages.filter((message) => message.role === 'user').map((message) => message.createdAt),
  }));
  const columns = ['date', 'enrolled', 'prompts_sent', 'prompts_replied', 'done', 'replies', 'active_participants'];
  const table = (zone: string) =>
    dailySeries(subjects, zone, NOW).map((day) => columns.map((column) => day[column as keyof typeof day]));

  it('counts each day in the reporting zone', () => {
    expect(table('America/Toronto')).toEqual([
      ['2026-06-01', 1, 1, 1, 1, 2, 1],
      ['2026-06-02', 2, 1, 1, 0, 1, 1],
      ['2026-06-03', 2, 1, 0, 0, 0, 0],
      ['2026-06-04', 2, 1, 1, 1, 2, 2],
      ['2026-06-05', 2, 1, 1, 1, 1, 1],
      ['2026-06-06', 2, 1, 0, 0, 0, 0],
    ]);
    expect(table('UTC')).toEqual([
      ['2026-06-01', 1, 1, 1, 1, 2, 1],
      ['2026-06-02', 1, 1, 1, 0, 1, 1],
      ['2026-06-03', 2, 1, 0, 0, 0, 0],
      ['2026-06-04', 2, 1, 1, 1, 1, 1],
      ['2026-06-05', 2, 1, 1, 1, 2, 1],
      ['2026-06-06', 2, 1, 0, 0, 0, 0],
    ]);
    const june4 = dailySeries(subjects, 'America/Toronto', NOW)[3]!;
    expect([june4.response_rate, june4.done_rate]).toEqual([1, 1]);
    const june3 = dailySeries(subjects, 'America/Toronto', NOW)[2]!;
    expect([june3.response_rate, june3.done_rate]).toEqual([0, 0]);
    // June 6's prompt is still open at noon: counted as sent, not yet as missed.
    const june6 = dailySeries(subjects, 'America/Toronto', NOW)[5]!;
    expect([june6.prompts_sent, june6.prompts_open, june6.response_rate]).toEqual([1, 1, null]);
    const dayLater = dailySeries(subjects, 'America/Toronto', new Date('2026-06-07T13:00:00Z'))[5]!;
    expect([dayLater.prompts_open, dayLater.response_rate]).toEqual([0, 0]);
    expect(dailySeries([], 'UTC', NOW)).toEqual([]);
  });

  it("gives one calendar cell per day in the participant's zone", () => {
    const cells = adherenceCalendar(subjects[0]!, 'America/Toronto', NOW).map((day) => [day.date, day.status]);
    expect(cells).toEqual([
      ['2026-06-01', 'done'],
      ['2026-06-02', 'replied'],
      ['2026-06-03', 'no_reply'],
      ['2026-06-04', 'done'],
      ['2026-06-05', 'done'],
      ['2026-06-06', 'pending'],
    ]);
    const dayLater = adherenceCalendar(subjects[0]!, 'America/Toronto', new Date('2026-06-07T13:00:00Z'));
    expect(dayLater.slice(-2).map((day) => [day.date, day.status])).toEqual([
      ['2026-06-06', 'no_reply'],
      ['2026-06-07', 'no_prompt'],
    ]);
    expect(adherenceCalendar(subjects[1]!, 'America/Toronto', NOW)).toEqual([
      { date: '2026-06-02', status: 'no_prompt', prompts: 0, done: 0, replies: 0 },
      { date: '2026-06-03', status: 'no_prompt', prompts: 0, done: 0, replies: 0 },
      { date: '2026-06-04', status: 'no_prompt', prompts: 0, done: 0, replies: 1 },
      { date: '2026-06-05', status: 'no_prompt', prompts: 0, done: 0, replies: 0 },
      { date: '2026-06-06', status: 'no_prompt', prompts: 0, done: 0, replies: 0 },
    ]);
  });
});
