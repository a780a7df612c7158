import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyProfile } from '../../src/core/profile.ts';
import { donePoll } from '../../src/flows/habit-coach/polls.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { conversation, message, outboxItem, participant } from '../store/store-fixtures.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

const NOW = new Date('2026-06-10T12:00:00Z');
const daysAgo = (days: number, hours = 0) => new Date(NOW.getTime() - days * 86_400_000 - hours * 3_600_000);

let server: TestServer;

/**
 * A participant as a week of a study leaves them: enrolled, their daily prompts (the "Did you do
 * it?" poll the coach's timer sends), replies ("done": each answers the latest poll still open),
 * deliveries. `prompts` and `done` are the coach's profile counters, which also count a Done to
 * an operator's poll (`operatorPolls`, as `POST /send` sends): the overview counts the transcript.
 */
async function seed(spec: {
  name: string;
  enrolled: Date;
  status?: 'active' | 'paused';
  subState: string;
  prompts: number;
  done: number;
  daily?: Date[];
  operatorPolls?: Date[];
  replies: Date[];
  failedDelivery?: boolean;
}) {
  const p = participant({ name: spec.name, enrolledAt: spec.enrolled, status: spec.status ?? 'active' });
  await server.store.insertParticipant(p);
  const c = conversation(p.id, { subState: spec.subState });
  await server.store.insertConversation(c);
  await server.store.saveProfile({
    ...emptyProfile(p.id, spec.enrolled),
    totalPrompts: spec.prompts,
    successCount: spec.done,
    lastPromptSentAt: spec.prompts > 0 ? daysAgo(1) : null,
  });
  const poll = (source: 'timer' | 'operator') => (at: Date) =>
    message(c.id, {
      role: 'assistant',
      kind: 'poll',
      poll: donePoll(),
      text: donePoll().question,
      source,
      createdAt: at,
    });
  const transcript = [
    ...spec.replies.map((at) => message(c.id, { role: 'user', source: 'participant', text: 'done', createdAt: at })),
    ...(spec.daily ?? []).map(poll('timer')),
    ...(spec.operatorPolls ?? []).map(poll('operator')),
  ].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()); // numbered in this order
  if (transcript.length > 0) await server.store.appendMessages(transcript);
  if (spec.failedDelivery) {
    const item = outboxItem(c.id, { createdAt: daysAgo(0, 5) });
    await server.store.enqueueOutbox([item]);
    await server.store.markOutboxAttemptFailed(item.id, { attempts: 8, error: 'receiver down', nextAttemptAt: null });
  }
  return p;
}

beforeAll(async () => {
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: NOW.toISOString() },
    { provider: createScriptedProvider(() => ({ text: 'ok' })) },
  );
});
afterAll(() => server.close());

describe('GET /study/overview', () => {
  it('counts what a coordinator would count by hand, and flags who needs a look', async () => {
    const engaged = await seed({
      name: 'Engaged',
      enrolled: daysAgo(7),
      subState: 'FEEDBACK',
      // The profile counted a Done to an operator's poll too: 9 "done" for 7 daily prompts.
      prompts: 7,
      done: 9,
      daily: [7, 6, 5, 4, 3, 2, 1].map((days) => daysAgo(days, 1)), // 11:00 each day
      operatorPolls: [daysAgo(0, 3)],
      // June 7 answers that day's prompt; June 10's answers the operator's poll, which replaced June 9's.
      replies: [daysAgo(8), daysAgo(3), daysAgo(0, 2)],
    });
    const silent = await seed({
      name: 'Silent',
      enrolled: daysAgo(7),
      subState: 'FEEDBACK',
      prompts: 7,
      done: 1,
      daily: [daysAgo(6, 1), daysAgo(5, 1), daysAgo(0, 1)], // the last still open
      replies: [daysAgo(6)],
      failedDelivery: true,
    });
    const stuck = await seed({
      name: 'Stuck',
      enrolled: daysAgo(2),
      subState: 'INTAKE',
      prompts: 0,
      done: 0,
      replies: [],
    });
    const paused = await seed({
      name: 'Paused',
      enrolled: daysAgo(5),
      status: 'paused',
      subState: 'FEEDBACK',
      prompts: 3,
      done: 3,
      daily: [daysAgo(4, 1)],
      replies: [daysAgo(4)],
    });

    const response = await server.request('GET', '/study/overview');
    expect(response.status).toBe(200);
    const { totals, participants } = response.body.result;
    const byName = Object.fromEntries(participants.map((row: { name: string }) => [row.name, row]));
    expect(byName.Engaged).toMatchObject({
      id: engaged.id,
      days_enrolled: 7,
      prompts_sent: 7,
      done_count: 1,
      done_rate: 0.143,
      replies_recent: 2,
      last_reply_at: daysAgo(0, 2).toISOString(),
      flags: [],
    });
    expect(byName.Silent).toMatchObject({
      id: silent.id,
      prompts_sent: 3,
      done_count: 1,
      done_rate: 0.5, // the open prompt is sent, not yet in the rate
      replies_recent: 1,
      flags: ['no_reply_48h', 'delivery_failing'],
    });
    expect(byName.Stuck).toMatchObject({
      id: stuck.id,
      days_enrolled: 2,
      prompts_sent: 0,
      done_rate: null,
      last_reply_at: null,
      flags: ['no_reply_48h', 'intake_incomplete_24h'],
    });
    expect(byName.Paused).toMatchObject({
      id: paused.id,
      status: 'paused',
      prompts_sent: 1,
      done_rate: 1,
      flags: ['paused'],
    });
    expect(totals).toMatchObject({
      participants: 4,
      by_status: { active: 3, paused: 1 },
      prompts_sent: 11,
      done_count: 3,
      done_rate: 0.3, // of the 10 prompts no longer open
      flagged: { no_reply_48h: 2, delivery_failing: 1, intake_incomplete_24h: 1, paused: 1 },
    });

    // Replied: June 7 and June 9 of 7 prompts (June 3 is before the last 7 days); the latest was not Done.
    expect(byName.Engaged).toMatchObject({ response_rate: 0.286, response_rate_recent: 0.333, current_streak: 0 });
    expect(byName.Silent).toMatchObject({ response_rate: 0.5, current_streak: 0 });
    // Replies count per day (UTC).
    const { series, time_zone: zone } = response.body.result;
    expect(zone).toBe('UTC');
    expect(
      series.map((day: { date: string; enrolled: number; replies: number }) => [day.date, day.enrolled, day.replies]),
    ).toEqual([
      ['2026-06-03', 2, 0],
      ['2026-06-04', 2, 1],
      ['2026-06-05', 3, 0],
      ['2026-06-06', 3, 1],
      ['2026-06-07', 3, 1],
      ['2026-06-08', 4, 0],
      ['2026-06-09', 4, 0],
      ['2026-06-10', 4, 1],
    ]);

    await server.request('PUT', `/conversation/participants/${engaged.id}`, { cohort: 'arm-A' });
    const armA = await server.request('GET', '/study/overview?cohort=arm-A');
    expect(
      armA.body.result.participants.map((row: { name: string; cohort: string }) => [row.name, row.cohort]),
    ).toEqual([['Engaged', 'arm-A']]);
    const onlyPaused = await server.request('GET', '/study/overview?status=paused');
    expect(onlyPaused.body.result.participants.map((row: { name: string }) => row.name)).toEqual(['Paused']);
    expect(await server.request('GET', '/study/overview?status=gone')).toMatchObject({
      status: 400,
      body: { field: 'status' },
    });
  });
});
