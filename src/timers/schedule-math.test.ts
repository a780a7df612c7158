import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Schedule } from '../core/schedule.ts';
import { localDate, nextFireTime, parseClockTime, sameDateIn } from './schedule-math.ts';

const schedule = (overrides: Partial<Schedule>): Schedule => ({
  id: 'sch_1',
  participantId: 'p',
  kind: 'fixed',
  fixedTime: '08:00',
  windowStart: null,
  windowEnd: null,
  timezone: 'America/Toronto',
  prepMinutes: 10,
  createdAt: new Date(0),
  ...overrides,
});
const fixedRandom = () => 0.5;

describe('parseClockTime', () => {
  it.each([
    ['08:00', 480],
    ['7:05', 425],
    ['23:59', 1439],
    ['00:00', 0],
  ])('reads %s', (text, minutes) => {
    expect(parseClockTime(text)).toBe(minutes);
  });
  it.each(['24:00', '8am', '08:60', '', '08:0'])('rejects %s', (text) => expect(parseClockTime(text)).toBeNull());
});

describe('nextFireTime', () => {
  it('fires at 07:50 local on the days around both DST changes in Toronto', () => {
    let at = new Date('2026-03-06T12:00:00Z');
    const local: string[] = [];
    for (let day = 0; day < 4; day++) {
      at = nextFireTime(schedule({}), at, fixedRandom);
      local.push(
        at.toLocaleString('en-CA', {
          timeZone: 'America/Toronto',
          hour12: false,
          month: '2-digit',
          day: '2-digit',
          hour: '2-digit',
          minute: '2-digit',
        }),
      );
    }
    // DST starts on 2026-03-08 in Toronto.
    expect(local).toEqual(['03-06, 07:50', '03-07, 07:50', '03-08, 07:50', '03-09, 07:50']);
    let autumn = new Date('2026-10-30T12:00:00Z');
    for (let day = 0; day < 4; day++) {
      autumn = nextFireTime(schedule({}), autumn, fixedRandom);
      expect(
        autumn.toLocaleTimeString('en-CA', {
          timeZone: 'America/Toronto',
          hour12: false,
          hour: '2-digit',
          minute: '2-digit',
        }),
      ).toBe('07:50');
    }
  });

  it('decides today or tomorrow in the schedule zone, not the server zone', () => {
    // 23:30 UTC on the 1st is 19:30 in Toronto: a 20:00 schedule (19:50 with prep) still fires that evening.
    const next = nextFireTime(schedule({ fixedTime: '20:00' }), new Date('2026-06-01T23:30:00Z'), fixedRandom);
    expect(next.toISOString()).toBe('2026-06-01T23:50:00.000Z');
    const after = nextFireTime(schedule({ fixedTime: '20:00' }), new Date('2026-06-01T23:50:00Z'), fixedRandom);
    expect(after.toISOString()).toBe('2026-06-02T23:50:00.000Z');
  });

  it('never fires at or before the given instant, and fires within a day', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 1439 }),
        (after, minute) => {
          const hh = String(Math.floor(minute / 60)).padStart(2, '0');
          const fixedTime = `${hh}:${String(minute % 60).padStart(2, '0')}`;
          const next = nextFireTime(schedule({ fixedTime, timezone: 'Europe/London' }), after, fixedRandom);
          expect(next.getTime()).toBeGreaterThan(after.getTime());
          expect(next.getTime() - after.getTime()).toBeLessThanOrEqual(25 * 3600_000);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('picks a random time inside the window (minus prep) each day', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.999999, noNaN: true }), (r) => {
        const random = schedule({
          kind: 'random',
          fixedTime: null,
          windowStart: '09:00',
          windowEnd: '11:00',
          timezone: 'UTC',
        });
        const next = nextFireTime(random, new Date('2026-05-01T00:00:00Z'), () => r);
        const minutes = next.getUTCHours() * 60 + next.getUTCMinutes();
        expect(minutes).toBeGreaterThanOrEqual(9 * 60 - 10);
        expect(minutes).toBeLessThanOrEqual(11 * 60 - 10);
        expect(localDate(next, 'UTC')).toBe('2026-05-01');
      }),
    );
  });

  it('skips the local day a firing was due on, so a random window prompts once a day', () => {
    const random = schedule({
      kind: 'random',
      fixedTime: null,
      windowStart: '09:00',
      windowEnd: '11:00',
      timezone: 'America/Toronto',
    });
    const firedAt = new Date('2026-05-01T13:00:00Z'); // 09:00 in Toronto, the window still open
    expect(
      localDate(
        nextFireTime(random, firedAt, () => 0.9),
        'America/Toronto',
      ),
    ).toBe('2026-05-01');
    const next = nextFireTime(random, firedAt, () => 0.9, firedAt);
    expect(localDate(next, 'America/Toronto')).toBe('2026-05-02');
  });
});

describe('sameDateIn', () => {
  it('keeps the calendar date an instant has in one zone, from the start of that date in another', () => {
    // 07:50 in Paris on the 3rd is 01:50 in Toronto on the 3rd: the 3rd starts at 04:00Z in Toronto.
    expect(sameDateIn(new Date('2026-06-03T05:50:00Z'), 'Europe/Paris', 'America/Toronto').toISOString()).toBe(
      '2026-06-03T04:00:00.000Z',
    );
    // 21:00 in Toronto on the 2nd is already the 3rd in Tokyo; the date kept is the 2nd.
    expect(sameDateIn(new Date('2026-06-03T01:00:00Z'), 'America/Toronto', 'Asia/Tokyo').toISOString()).toBe(
      '2026-06-01T15:00:00.000Z',
    );
  });
});
