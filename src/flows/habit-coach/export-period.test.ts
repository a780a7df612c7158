import { describe, expect, it } from 'vitest';
import { isAppError } from '../../core/errors.ts';
import { exportPeriod, inPeriod } from './export-period.ts';

const iso = (date: Date | null) => date?.toISOString() ?? null;
const period = (from: string | undefined, to: string | undefined, zone = 'America/Toronto') => {
  const { from: start, until } = exportPeriod(from, to, zone);
  return [iso(start), iso(until)];
};
function refused(from: string | undefined, to: string | undefined, zone = 'UTC') {
  try {
    exportPeriod(from, to, zone);
  } catch (error) {
    if (isAppError(error)) return { code: error.code, field: error.field, message: error.message };
    throw error;
  }
  throw new Error(`accepted from=${from} to=${to}`);
}

describe('exportPeriod', () => {
  it('reads a date as a whole day in the study zone, both ends included', () => {
    expect(period('2026-06-03', '2026-06-05')).toEqual(['2026-06-03T04:00:00.000Z', '2026-06-06T04:00:00.000Z']);
    expect(period('2026-06-03', '2026-06-03', 'UTC')).toEqual(['2026-06-03T00:00:00.000Z', '2026-06-04T00:00:00.000Z']);
    // The day the clocks go back in Toronto has 25 hours.
    expect(period('2026-11-01', '2026-11-01')).toEqual(['2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z']);
  });

  it('takes an instant with its offset as it is, `to` included to the millisecond', () => {
    expect(period('2026-06-03T09:00:00-04:00', '2026-06-03T13:30:00.250Z')).toEqual([
      '2026-06-03T13:00:00.000Z',
      '2026-06-03T13:30:00.251Z',
    ]);
    expect(period('2026-06-03T09:00+0530', undefined)).toEqual(['2026-06-03T03:30:00.000Z', null]);
    expect(period(undefined, '2026-06-03t13:00:00z')).toEqual([null, '2026-06-03T13:00:00.001Z']);
    expect(period(undefined, undefined)).toEqual([null, null]);
    // A `+` left unencoded in a URL arrives as a space.
    expect(period('2026-06-03T09:00:00 02:00', undefined)).toEqual(['2026-06-03T07:00:00.000Z', null]);
    // from = to is one instant (or one day).
    expect(period('2026-06-03T09:00:00Z', '2026-06-03T09:00:00Z')).toEqual([
      '2026-06-03T09:00:00.000Z',
      '2026-06-03T09:00:00.001Z',
    ]);
  });

  it('refuses what it cannot read, naming the field', () => {
    for (const bad of ['yesterday', '2026-02-30', '2026-13-01', '20260603', '2026-06-03T25:00:00Z', '1780000000', ''])
      expect(refused(bad, undefined), bad).toMatchObject({ code: 'invalid_request', field: 'from' });
    expect(refused(undefined, '2026-06-03T09:00:00')).toMatchObject({
      field: 'to',
      message: expect.stringContaining('no offset'),
    });
    expect(refused(undefined, '2026-06-03 09:00')).toMatchObject({ field: 'to' });
  });

  it('refuses a `to` before `from`, naming `to`', () => {
    expect(refused('2026-06-04', '2026-06-03')).toMatchObject({ code: 'invalid_request', field: 'to' });
    expect(refused('2026-06-03T09:00:00.001Z', '2026-06-03T09:00:00Z')).toMatchObject({ field: 'to' });
    // A date `to` runs to the end of its day: a `from` later that day is still before it.
    expect(period('2026-06-03T23:00:00-04:00', '2026-06-03')).toEqual([
      '2026-06-04T03:00:00.000Z',
      '2026-06-04T04:00:00.000Z',
    ]);
  });
});

describe('inPeriod', () => {
  it('keeps from its start, up to but not including its end', () => {
    const window = exportPeriod('2026-06-03T00:00:00Z', '2026-06-03T23:59:59.999Z', 'UTC');
    expect(inPeriod(window, new Date('2026-06-02T23:59:59.999Z'))).toBe(false);
    expect(inPeriod(window, new Date('2026-06-03T00:00:00Z'))).toBe(true);
    expect(inPeriod(window, new Date('2026-06-03T23:59:59.999Z'))).toBe(true);
    expect(inPeriod(window, new Date('2026-06-04T00:00:00Z'))).toBe(false);
    expect(inPeriod(exportPeriod(undefined, undefined, 'UTC'), new Date(0))).toBe(true);
  });
});
