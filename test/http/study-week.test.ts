import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { unzipText } from '../kit/unzip.ts';
import { PROMPT_TEXT, startHabitFixture, type HabitFixture } from '../timers/habit-fixture.ts';

/**
 * A week of a study on the virtual clock, driven through HTTP like a participant would: daily
 * prompts at 07:50 in Toronto, answered Done, Not yet, not at all, done, Done, and one still open.
 */
let fixture: HabitFixture;
const DATABASE_URL = tempSqliteUrl(); // named, so `npm run export` can read it too
const ZONE = 'america/toronto';

beforeAll(async () => {
  fixture = await startHabitFixture({
    clockStart: '2026-06-01T12:00:00Z',
    phone: '+14165550161',
    timezone: 'America/Toronto',
    env: { STUDY_TIMEZONE: ZONE, DATABASE_URL },
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
    const response = await fixture.server.fetch(`/study/export`);
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

describe('the export of a window of the week (from, to)', () => {
  /** The column that says when a row happened: what `from` and `to` select on, file by file. */
  const TIME_COLUMN: Record<string, string> = {
    'messages.csv': 'created_at',
    'prompts.csv': 'sent_at',
    'poll_answers.csv': 'answered_at',
    'profile_changes.csv': 'changed_at',
    'tone.csv': 'changed_at',
    'turns.csv': 'started_at',
    'tool_calls.csv': 'created_at',
    'deliveries.csv': 'created_at',
  };
  async function exported(query: string): Promise<Map<string, Record<string, string>[]>> {
    const response = await fixture.server.fetch(`/study/export${query}`);
    expect(response.status).toBe(200);
    const files = await unzipText(Buffer.from(await response.arrayBuffer()));
    return new Map([...files].map(([name, text]) => [name, parse(text, { columns: true, bom: true })]));
  }

  it('keeps, in every time-stamped file, exactly the rows of the window; participants.csv stays whole', async () => {
    const all = await exported('');
    // Dates are days in STUDY_TIMEZONE (Toronto, UTC-4): the first day ends at 04:00 UTC on 2 June.
    const windows = [
      { query: '?to=2026-06-01', from: -Infinity, until: Date.parse('2026-06-02T04:00:00Z') },
      {
        query: `?from=${encodeURIComponent('2026-06-02T00:00:00-04:00')}&to=2026-06-04`,
        from: Date.parse('2026-06-02T04:00:00Z'),
        until: Date.parse('2026-06-05T04:00:00Z'),
      },
      { query: '?from=2026-06-06T13:00:00Z', from: Date.parse('2026-06-06T13:00:00Z'), until: Infinity },
    ];
    const keptSomewhere = new Set<string>();
    const leftOutSomewhere = new Set<string>();
    for (const window of windows) {
      const files = await exported(window.query);
      expect(files.get('participants.csv'), window.query).toEqual(all.get('participants.csv'));
      expect(files.get('codebook.csv'), window.query).toEqual(all.get('codebook.csv'));
      for (const [name, column] of Object.entries(TIME_COLUMN)) {
        const inWindow = all.get(name)!.filter((row) => {
          const at = Date.parse(row[column]!);
          return at >= window.from && at < window.until;
        });
        expect(files.get(name), `${name} ${window.query}`).toEqual(inWindow);
        if (inWindow.length > 0) keptSomewhere.add(name);
        if (inWindow.length < all.get(name)!.length) leftOutSomewhere.add(name);
      }
    }
    // Each file had rows inside and rows outside some window: no comparison above was vacuous.
    expect([...keptSomewhere].sort()).toEqual(Object.keys(TIME_COLUMN).sort());
    expect([...leftOutSomewhere].sort()).toEqual(Object.keys(TIME_COLUMN).sort());
    // Every file of the export but the codebook is either filtered by time or participants.csv.
    expect([...all.keys()].filter((name) => !(name in TIME_COLUMN))).toEqual(['participants.csv', 'codebook.csv']);

    // By hand: 2-4 June in Toronto holds three prompts, and their two answers.
    const middle = await exported(`?from=2026-06-02&to=2026-06-04`);
    expect(middle.get('prompts.csv')!.map((row) => row.sent_local)).toEqual([
      '2026-06-02T07:50:00.000-04:00',
      '2026-06-03T07:50:00.000-04:00',
      '2026-06-04T07:50:00.000-04:00',
    ]);
    expect(middle.get('poll_answers.csv')!.map((row) => row.option)).toEqual(['Done', 'Not yet']);
  });

  it('includes `to` itself, with the offset it is given (an unencoded + arrives as a space, read as +)', async () => {
    const sentAt = '2026-06-02T11:50:00.000Z'; // the first prompt
    const upTo = async (to: string) =>
      (await exported(`?from=2026-06-02&to=${to}`)).get('prompts.csv')!.map((row) => row.sent_at);
    expect(await upTo(encodeURIComponent('2026-06-02T07:50:00-04:00'))).toEqual([sentAt]);
    expect(await upTo('2026-06-02T07:49:59.999-04:00')).toEqual([]);
    expect(await upTo('2026-06-02T13:50:00+02:00')).toEqual([sentAt]);
  });

  it('refuses a window it cannot read, naming the field', async () => {
    const refused = (query: string) => fixture.server.request('GET', `/study/export${query}`);
    expect(await refused('?from=last-week')).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', field: 'from' },
    });
    expect(await refused('?to=2026-06-03T09:00:00')).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', field: 'to', message: expect.stringContaining('offset') },
    });
    expect(await refused('?from=2026-06-05&to=2026-06-04')).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', field: 'to' },
    });
    expect(await refused('?from=')).toMatchObject({ status: 400, body: { field: 'from' } });
  });
});

describe('npm run export with --from and --to', () => {
  const exportCli = (args: string[]) =>
    promisify(execFile)(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', 'src/cli/export-study.ts', ...args],
      { env: { ...process.env, DATABASE_URL, STUDY_TIMEZONE: ZONE, LOG_LEVEL: 'silent' } },
    );

  it('writes the files the download gives for the same window, from the database of the running server', async () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'export-')), 'week');
    await exportCli(['--out', directory, '--from', '2026-06-02', '--to', '2026-06-04T07:50:00-04:00']);
    const response = await fixture.server.fetch(
      `/study/export?from=2026-06-02&to=${encodeURIComponent('2026-06-04T07:50:00-04:00')}`,
    );
    const downloaded = await unzipText(Buffer.from(await response.arrayBuffer()));
    const everything = await unzipText(Buffer.from(await (await fixture.server.fetch(`/study/export`)).arrayBuffer()));
    for (const [name, text] of downloaded) expect(readFileSync(join(directory, name), 'utf8'), name).toBe(text);
    expect(downloaded.get('prompts.csv')!.split('\r\n').filter(Boolean)).toHaveLength(1 + 3);
    expect(downloaded.get('messages.csv')!.length).toBeLessThan(everything.get('messages.csv')!.length);
  });

  it('refuses a window it cannot read, naming the option', async () => {
    const refused = (args: string[]) =>
      exportCli(['--out', tmpdir(), ...args]).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
    const [noOffset, reversed] = await Promise.all([
      refused(['--to', '2026-06-03T09:00:00']),
      refused(['--from', '2026-06-05', '--to', '2026-06-04']),
    ]);
    expect(noOffset).toMatchObject({ code: 2, stderr: expect.stringMatching(/^--to: .*offset/) });
    expect(reversed).toMatchObject({ code: 2, stderr: expect.stringMatching(/^--to: .*before from/) });
  });
});
