import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Timer } from '../../src/core/timer.ts';
import { platformQueries } from '../../src/http/go-platform/platform-queries.ts';
import { goScheduleKey } from '../../src/http/go-platform/schedule-timer.ts';
import type { Store } from '../../src/store/store.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

// A `POST /schedule` series and what else touches its timer row: DELETE /timers/{id} while a
// firing is claimed or under way, and the participant's own timer list.
const START = '2026-03-20T12:00:00.000Z'; // 08:00 in Toronto
const PHONE = '+14165550123';
const DUE = new Date('2026-03-20T13:00:00.000Z'); // 09:00 in Toronto

/** Resolves with the series row of the next `claimDueTimers` that claims one (the worker's, or a test's). */
function claimWatch() {
  let resolve: (row: Timer) => void = () => undefined;
  const wrap = (store: Store): Store =>
    new Proxy(store, {
      get(target, property) {
        if (property === 'claimDueTimers')
          return async (...args: Parameters<Store['claimDueTimers']>) => {
            const rows = await target.claimDueTimers(...args);
            const series = rows.find((row) => row.kind === 'go-schedule');
            if (series) resolve(series);
            return rows;
          };
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  return {
    wrap,
    /** The next claim, from now on. */
    next: () => new Promise<Timer>((r) => (resolve = r)),
  };
}

const watch = claimWatch();
let server: TestServer;
let participantId: string;
let conversationId: string;

beforeAll(async () => {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: START }, { wrapStore: watch.wrap });
  const enrolled = await server.request('POST', '/conversation/participants', {
    phone_number: PHONE,
    timezone: 'America/Toronto',
  });
  participantId = enrolled.body.result.id;
  conversationId = (await server.store.findConversationByParticipant(participantId))!.id;
  await server.settle();
});
afterAll(() => server?.close());

const texts = () => server.sink.to(PHONE).map((message) => message.text);
const schedule = async (body: string) =>
  (await server.request('POST', '/schedule', { to: PHONE, body, schedule: { hour: 9, minute: 0 } })).body
    .result as string;
/** The series' rows still to fire (pending, or claimed and running). */
const seriesRows = async (id: string) =>
  (await server.store.extend(platformQueries).ops.activeTimers()).filter((t) => t.dedupKey === goScheduleKey(id))
    .length;

describe('DELETE /timers/{id} and a firing', () => {
  it('ends a series whose row a firing has claimed but not run (its process died): it is not run later', async () => {
    const id = await schedule('Claimed then cancelled');
    const [row] = await server.store.claimDueTimers(DUE, 10, new Date(DUE.getTime() + 15_000));
    expect(row).toMatchObject({ dedupKey: goScheduleKey(id), status: 'running' });
    expect(await server.request('DELETE', `/timers/${id}`)).toMatchObject({ status: 200, body: { canceled: true } });
    expect((await server.store.getTimer(row!.id))?.status).toBe('cancelled');
    // The claim's lease runs out: a running row would be claimed again and fired.
    await server.request('POST', '/admin/clock', { to: '2026-03-21T14:00:00Z' });
    await server.settle();
    expect(texts()).not.toContain('Claimed then cancelled');
    expect((await server.request('GET', `/timers/${id}`)).status).toBe(404);
    expect(await seriesRows(id)).toBe(0);
  });

  it('a firing whose row was cancelled while queued for its conversation neither sends nor arms the next', async () => {
    const id = await schedule('Waited, then cancelled');
    const claimed = watch.next();
    let release: () => void = () => undefined;
    const busy = server.engine.exclusive(conversationId, () => new Promise<void>((resolve) => (release = resolve)));
    const advancing = server.request('POST', '/admin/clock', { advance: '1d' }); // 2026-03-22 14:00Z: due
    const row = await claimed; // the worker holds the row and waits for the conversation
    expect(row?.dedupKey).toBe(goScheduleKey(id));
    // As a DELETE in another process would, holding the conversation first.
    expect(await server.store.extend(platformQueries).ops.cancelSeries(goScheduleKey(id), server.clock.now())).toBe(1);
    release();
    await busy;
    expect((await advancing).status).toBe(200);
    await server.settle();
    expect(texts()).not.toContain('Waited, then cancelled');
    expect((await server.store.getTimer(row!.id))?.status).toBe('cancelled');
    expect(await seriesRows(id)).toBe(0);
  });

  it('a firing that is not cancelled sends and arms the next (what the two above rule out)', async () => {
    const id = await schedule('Fires');
    const claimed = watch.next();
    const advancing = server.request('POST', '/admin/clock', { advance: '1d' });
    const row = await claimed;
    await advancing;
    await server.settle();
    expect(texts().filter((text) => text === 'Fires')).toHaveLength(1);
    expect((await server.store.getTimer(row!.id))?.status).toBe('done');
    expect(await seriesRows(id)).toBe(1);
    expect((await server.request('DELETE', `/timers/${id}`)).status).toBe(200);
    expect(await seriesRows(id)).toBe(0);
  });
});

describe("the participant's timers", () => {
  it('list their POST /schedule series next to their own timers, until it is cancelled', async () => {
    const id = await schedule('Listed');
    const key = goScheduleKey(id);
    const listed = async (path: string) => {
      const body = (await server.request('GET', `/conversation/participants/${participantId}${path}`)).body.result;
      return ((path === '/state' ? body.pending_timers : body) as Array<{ key: string; kind: string }>).filter(
        (timer) => timer.key === key,
      );
    };
    const { next_run } = (await server.request('GET', `/timers/${id}`)).body;
    expect(await listed('/timers')).toEqual([
      { id: expect.any(String), kind: 'go-schedule', due_at: next_run, key, attempts: 0 },
    ]);
    expect(await listed('/state')).toHaveLength(1);
    // Another participant's series is theirs alone.
    const other = await server.request('POST', '/conversation/participants', { phone_number: '+16135550142' });
    const theirs = await server.request('GET', `/conversation/participants/${other.body.result.id}/timers`);
    expect(theirs.body.result.filter((timer: { key: string }) => timer.key === key)).toEqual([]);

    await server.request('DELETE', `/timers/${id}`);
    expect(await listed('/timers')).toEqual([]);
    expect(await listed('/state')).toEqual([]);
  });
});

describe('a POST /schedule send in the study', () => {
  it('is written as source schedule, and the study does not count it as a daily prompt', async () => {
    await schedule('Counted apart');
    await server.request('POST', '/admin/clock', { advance: '1d' });
    await server.settle();
    const transcript = await server.store.listMessages(conversationId);
    const sent = transcript.filter(
      (message) =>
        message.createdAt.getTime() === transcript.find((m) => m.text === 'Counted apart')!.createdAt.getTime(),
    );
    expect(sent.map((message) => [message.kind, message.source])).toEqual([
      ['text', 'schedule'],
      ['poll', 'schedule'],
    ]);
    // The daily prompts the coach sent (none yet: intake is not done) are what the study counts.
    const { participants, series } = (await server.request('GET', '/study/overview')).body.result;
    const sentByDay = series.reduce((total: number, day: { prompts_sent: number }) => total + day.prompts_sent, 0);
    expect([participants[0].prompts_sent, sentByDay]).toEqual([0, 0]);
  });
});
