import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipText } from '../kit/unzip.ts';
import { PROMPT_TEXT, startHabitFixture, type HabitFixture } from '../timers/habit-fixture.ts';

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
    onUser: (text) =>
      text === 'be brief please'
        ? {
            toolCalls: [
              { name: 'save_user_profile', arguments: { tone_tags: ['concise'], tone_update_source: 'explicit' } },
            ],
          }
        : undefined,
  });
  await fixture.say('set me up');
  await fixture.say('be brief please');
  // Day by day: the prompt goes out at 11:50 UTC; Done, Not yet, silence, done, Done and "more", still open.
  const replies: string[][] = [['1'], ['Not yet'], [], ['done'], ['Done', '5'], []];
  for (const [index, day] of replies.entries()) {
    await fixture.advance(`2026-06-0${index + 2}T13:00:00Z`);
    for (const reply of day) await fixture.say(reply);
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
      response_rate: 0.8, // 4 of the 5 settled prompts; the one still open is not counted yet
      response_rate_recent: 0.8,
      current_streak: 2,
    });
    const columns = ['date', 'enrolled', 'prompts_sent', 'prompts_replied', 'done', 'prompts_open', 'replies'];
    expect(series.map((day: Record<string, unknown>) => columns.map((column) => day[column]))).toEqual([
      ['2026-06-01', 1, 0, 0, 0, 0, 2], // enrolled at 08:00, "set me up", "be brief please"
      ['2026-06-02', 1, 1, 1, 1, 0, 1],
      ['2026-06-03', 1, 1, 1, 0, 0, 1],
      ['2026-06-04', 1, 1, 0, 0, 0, 0],
      ['2026-06-05', 1, 1, 1, 1, 0, 1],
      ['2026-06-06', 1, 1, 1, 1, 0, 2],
      ['2026-06-07', 1, 1, 0, 0, 1, 0],
    ]);
    expect(series.map((day: { active_participants: number }) => day.active_participants)).toEqual([
      1, 1, 1, 0, 1, 1, 0,
    ]);
    expect(series.map((day: { response_rate: number | null }) => day.response_rate)).toEqual([
      null,
      1,
      1,
      0,
      1,
      1,
      null, // today's prompt is still open
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

describe('the export after a simulated week', () => {
  async function exported(): Promise<Map<string, Record<string, string>[]>> {
    const response = await fetch(`${fixture.server.url}/study/export`);
    const files = await unzipText(Buffer.from(await response.arrayBuffer()));
    return new Map([...files].map(([name, text]) => [name, parse(text, { columns: true, bom: true })]));
  }
  const api = async (path: string) =>
    (await fixture.server.request('GET', `/conversation/participants/${fixture.participantId}${path}`)).body.result;

  it('re-read, gives the prompts, poll answers, profile changes and tone the API shows', async () => {
    const files = await exported();
    const history: Array<{ id: string; kind: string; source: string; text: string; poll?: { question: string } }> = (
      await api('/history?all=true')
    ).messages;
    const state = await api('/state');

    const prompts = files.get('prompts.csv')!;
    const donePolls = history.filter((m) => m.source === 'timer' && m.poll?.question === 'Did you do it?');
    expect(prompts.map((row) => row.poll_message_id)).toEqual(donePolls.map((m) => m.id));
    expect(prompts.map((row) => [row.sent_local, row.scheduled_local, row.replied, row.answer, row.done])).toEqual([
      ['2026-06-02T07:50:00.000-04:00', '2026-06-02T07:50:00.000-04:00', '1', 'Done', '1'],
      ['2026-06-03T07:50:00.000-04:00', '2026-06-03T07:50:00.000-04:00', '1', 'Not yet', '0'],
      ['2026-06-04T07:50:00.000-04:00', '2026-06-04T07:50:00.000-04:00', '0', '', '0'],
      ['2026-06-05T07:50:00.000-04:00', '2026-06-05T07:50:00.000-04:00', '1', 'Done', '1'],
      ['2026-06-06T07:50:00.000-04:00', '2026-06-06T07:50:00.000-04:00', '1', 'Done', '1'],
      ['2026-06-07T07:50:00.000-04:00', '2026-06-07T07:50:00.000-04:00', '0', '', '0'],
    ]);
    expect(prompts.every((row) => row.text === PROMPT_TEXT)).toBe(true);
    expect(prompts.filter((row) => row.done === '1')).toHaveLength(state.profile.success_count);

    const answers = files.get('poll_answers.csv')!;
    expect(answers.map((row) => [row.answer_text, row.question, row.option, row.option_number])).toEqual([
      ['1', 'Did you do it?', 'Done', '1'],
      ['Not yet', 'Did you do it?', 'Not yet', '2'],
      ['done', 'Did you do it?', 'Done', '1'],
      ['Done', 'Did you do it?', 'Done', '1'],
      ['5', 'How should your next prompts feel?', 'Increase', '5'],
    ]);
    const byId = new Map(history.map((m) => [m.id, m]));
    expect(answers.every((row) => byId.get(row.answer_message_id!)?.text === row.answer_text)).toBe(true);

    const changes = files.get('profile_changes.csv')!;
    expect(changes.map((row) => [row.field, row.old_value, row.new_value, row.source])).toEqual([
      ['habit_domain', '', 'walking', 'save_user_profile'],
      ['motivational_frame', '', 'energy', 'save_user_profile'],
      ['preferred_time', '', '08:00', 'save_user_profile'],
      ['prompt_anchor', '', 'after coffee', 'save_user_profile'],
      ['intensity', 'normal', 'high', 'intensity_poll'],
    ]);
    // The last change of each field is the profile the API shows.
    for (const row of changes) expect(state.profile[row.field!], row.field).toBe(row.new_value);

    const tone = files.get('tone.csv')!;
    expect(tone).toEqual([
      expect.objectContaining({ source: 'explicit', proposed_tags: '["concise"]', active_tags: '["concise"]' }),
    ]);
    expect(JSON.parse(tone[0]!.scores!)).toEqual(state.profile.tone.scores);
    expect(JSON.parse(tone[0]!.active_tags!)).toEqual(state.profile.tone.active);
  });
});
