import { describe, expect, it } from 'vitest';
import { readReminders, remindersByParticipant, unownedReminderProblems } from './go-reminders.ts';
import type { GoJobRow } from './read-go-study.ts';

const job = (id: string, payload: string | null, dedupeKey: string | null): GoJobRow => ({
  id,
  kind: 'daily_prompt_reminder',
  status: 'queued',
  run_at: '2026-03-19 17:50:05.201990358+00:00',
  payload_json: payload,
  dedupe_key: dedupeKey,
});
const payload = (participantId: string) =>
  JSON.stringify({ participant_id: participantId, to: '1', expected_sent_at: '2026-03-19T12:50:05Z' });

describe("Go's reminder jobs", () => {
  it('go to the participant their payload names, else their dedupe key; one naming no one is unowned', () => {
    const jobs = [
      job('job_a', payload('p_1'), 'daily_prompt_reminder:p_1'),
      job('job_b', '{p_2', 'daily_prompt_reminder:p_2'),
      job('job_c', '{', null),
      { ...job('job_d', '{', 'auto_feedback:p_1'), kind: 'auto_feedback_enforcement' },
    ];
    const { byParticipant, unowned } = remindersByParticipant(jobs);
    expect([...byParticipant].map(([owner, owned]) => [owner, owned.map((row) => row.id)])).toEqual([
      ['p_1', ['job_a']],
      ['p_2', ['job_b']],
    ]);
    expect(unowned.map((row) => row.id)).toEqual(['job_c']);
    expect(unownedReminderProblems(jobs[2]!)).toEqual([
      { field: 'jobs.payload_json', message: expect.stringMatching(/^job job_c: not JSON: /) },
      { field: 'jobs.dedupe_key', message: 'job job_c: names no participant (null)' },
    ]);
  });

  it('are read with their times, each problem naming the job', () => {
    expect(readReminders([job('job_a', payload('p_1'), null)])).toEqual({
      value: [
        {
          jobId: 'job_a',
          dueAt: new Date('2026-03-19T17:50:05.201Z'),
          promptSentAt: new Date('2026-03-19T12:50:05Z'),
          queued: true,
        },
      ],
    });
    const late = { ...job('job_b', JSON.stringify({ participant_id: 'p_1', expected_sent_at: 'soon' }), null) };
    expect(readReminders([{ ...late, run_at: 'later' }, job('job_c', null, null)])).toEqual({
      problems: [
        { field: 'jobs.run_at', message: 'job job_b: unreadable time "later"' },
        { field: 'jobs.payload_json.expected_sent_at', message: 'job job_b: unreadable time "soon"' },
        { field: 'jobs.payload_json', message: 'job job_c: is empty' },
      ],
    });
  });
});
