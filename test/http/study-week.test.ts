import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHabitFixture, type HabitFixture } from '../timers/habit-fixture.ts';

/**
 * A week of a study on the virtual clock, driven through HTTP like a participant would: daily
 * prompts at 07:50 in Toronto, answered Done, Not yet, not at all, done, Done, and one still open.
 */
let fixture: HabitFixture;

beforeAll(async () => {
  fixture = await startHabitFixture({
    clockStart: '2026-06-01T12:00:00Z',
    phone: '+14165550161',
    timezone: 'America/Toronto',
    env: { STUDY_TIMEZONE: 'america/toronto' },
  });
  await fixture.say('set me up');
  const replies: Array<string | null> = ['1', 'Not yet', null, 'done', 'Done', null];
  for (const [index, reply] of replies.entries()) {
    await fixture.advance(`2026-06-0${index + 2}T13:00:00Z`); // the prompt went out at 11:50 UTC
    if (reply) await fixture.say(reply);
  }
}, 60_000);
afterAll(() => fixture?.close());

describe('the overview after a simulated week', () => {
  it('matches a hand count, and what the coach itself counted', async () => {
    const { body } = await fixture.server.request('GET', '/study/overview');
    const { participants, series, time_zone: zone } = body.result;
    expect(zone).toBe('America/Toronto');
    expect(participants[0]).toMatchObject({
      prompts_sent: 6,
      done_count: 3,
      response_rate: 0.667,
      response_rate_recent: 0.667,
      current_streak: 2,
    });
    const columns = ['date', 'enrolled', 'prompts_sent', 'prompts_replied', 'done', 'replies', 'active_participants'];
    expect(series.map((day: Record<string, unknown>) => columns.map((column) => day[column]))).toEqual([
      ['2026-06-01', 1, 0, 0, 0, 1, 1], // enrolled at 08:00, "set me up"
      ['2026-06-02', 1, 1, 1, 1, 1, 1],
      ['2026-06-03', 1, 1, 1, 0, 1, 1],
      ['2026-06-04', 1, 1, 0, 0, 0, 0],
      ['2026-06-05', 1, 1, 1, 1, 1, 1],
      ['2026-06-06', 1, 1, 1, 1, 1, 1],
      ['2026-06-07', 1, 1, 0, 0, 0, 0],
    ]);
    // The series reads "done" from the transcript; the coach counted it in the profile as it went.
    const sum = (column: string) =>
      series.reduce((total: number, day: Record<string, number>) => total + day[column]!, 0);
    expect([sum('prompts_sent'), sum('done')]).toEqual([participants[0].prompts_sent, participants[0].done_count]);
  });

  it("gives the participant's adherence calendar in their zone", async () => {
    const { body } = await fixture.server.request('GET', `/study/participants/${fixture.participantId}/adherence`);
    expect(body.result).toMatchObject({ time_zone: 'America/Toronto', current_streak: 2 });
    expect(body.result.days.map((day: { date: string; status: string }) => [day.date, day.status])).toEqual([
      ['2026-06-01', 'no_prompt'],
      ['2026-06-02', 'done'],
      ['2026-06-03', 'replied'],
      ['2026-06-04', 'no_reply'],
      ['2026-06-05', 'done'],
      ['2026-06-06', 'done'],
      ['2026-06-07', 'pending'],
    ]);
    const missing = await fixture.server.request('GET', '/study/participants/p_nobody/adherence');
    expect(missing).toMatchObject({ status: 404, body: { code: 'participant_not_found', field: 'id' } });
  });
});
