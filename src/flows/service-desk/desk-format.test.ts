import { describe, expect, it } from 'vitest';
import { deskFormat } from './desk-format.ts';

// Issue #22: money, dates and times as a caller of the desk's locale says them, in the desk's zone.
describe('deskFormat', () => {
  it('en-US: dollars, "Thursday, June 4", 12-hour windows with AM/PM said once', () => {
    const f = deskFormat('en-US', 'America/Los_Angeles');
    expect(f.money(12900, 'USD')).toBe('$129.00');
    expect(f.money(123456, 'EUR')).toBe('€1,234.56');
    expect(f.date('2026-06-04')).toBe('Thursday, June 4');
    expect(f.time('2026-06-04', '09:00')).toBe('9:00 AM');
    expect(f.time('2026-06-04', '13:30')).toBe('1:30 PM');
    expect(f.window('2026-06-04', '09:00', '11:00')).toBe('9:00–11:00 AM');
    expect(f.window('2026-06-04', '13:00', '15:00')).toBe('1:00–3:00 PM');
    expect(f.when('2026-06-04', '09:00', '11:00')).toBe('Thursday, June 4, 9:00–11:00 AM');
  });

  it('a window crossing noon says both day periods (en-US), or none (24-hour locales)', () => {
    expect(deskFormat('en-US', 'America/Los_Angeles').window('2026-06-04', '11:00', '13:00')).toBe('11:00 AM–1:00 PM');
    expect(deskFormat('de-DE', 'Europe/Berlin').window('2026-06-04', '11:00', '13:00')).toBe('11:00–13:00');
    expect(deskFormat('en-GB', 'Europe/London').window('2026-06-04', '11:00', '13:00')).toBe('11:00–13:00');
    // Where the day period comes first, it is said once in front.
    expect(deskFormat('ko-KR', 'Asia/Seoul').window('2026-06-04', '09:00', '11:00')).toBe('오전 9:00–11:00');
  });

  it('de-DE: amounts with a decimal comma, "Donnerstag, 4. Juni", 24-hour windows', () => {
    const f = deskFormat('de-DE', 'Europe/Berlin');
    expect(f.money(12900, 'USD')).toBe('129,00 $');
    expect(f.money(123456, 'EUR')).toBe('1.234,56 €');
    expect(f.date('2026-06-04')).toBe('Donnerstag, 4. Juni');
    expect(f.time('2026-06-04', '09:00')).toBe('09:00');
    expect(f.window('2026-06-04', '09:00', '11:00')).toBe('09:00–11:00');
    expect(f.when('2026-06-04', '13:00', '15:00')).toBe('Donnerstag, 4. Juni, 13:00–15:00');
  });

  it('en-GB: pounds, "Thursday 4 June", 24-hour windows', () => {
    const f = deskFormat('en-GB', 'Europe/London');
    expect(f.money(12900, 'GBP')).toBe('£129.00');
    expect(f.money(12900, 'USD')).toBe('US$129.00');
    expect(f.date('2026-06-04')).toBe('Thursday 4 June');
    expect(f.window('2026-06-04', '09:00', '11:00')).toBe('09:00–11:00');
    expect(f.when('2026-06-04', '09:00', '11:00')).toBe('Thursday 4 June, 09:00–11:00');
  });

  it('keeps wall-clock times across the DST changes of America/Los_Angeles', () => {
    const f = deskFormat('en-US', 'America/Los_Angeles');
    // Sunday, March 8, 2026: clocks go from 2:00 to 3:00 AM.
    expect(f.when('2026-03-08', '09:00', '11:00')).toBe('Sunday, March 8, 9:00–11:00 AM');
    expect(f.window('2026-03-08', '01:00', '03:00')).toBe('1:00–3:00 AM');
    // A time the clocks skip is said as they read at that moment.
    expect(f.time('2026-03-08', '02:30')).toBe('3:30 AM');
    // Sunday, November 1, 2026: from 2:00 back to 1:00 AM.
    expect(f.when('2026-11-01', '01:00', '03:00')).toBe('Sunday, November 1, 1:00–3:00 AM');
    expect(f.when('2026-11-01', '13:00', '15:00')).toBe('Sunday, November 1, 1:00–3:00 PM');
    // The days either side, an hour apart in UTC offset, read the same.
    expect(f.when('2026-03-07', '09:00', '11:00')).toBe('Saturday, March 7, 9:00–11:00 AM');
    expect(f.when('2026-03-09', '09:00', '11:00')).toBe('Monday, March 9, 9:00–11:00 AM');
  });

  it("reads dates and times in the desk's zone, whatever the process's zone", () => {
    // Far from UTC either way: a date or time read as UTC (or as the process's zone) would move.
    expect(deskFormat('en-US', 'Pacific/Kiritimati').when('2026-06-04', '00:30', '02:00')).toBe(
      'Thursday, June 4, 12:30–2:00 AM',
    );
    expect(deskFormat('en-US', 'Pacific/Pago_Pago').when('2026-06-04', '22:00', '23:30')).toBe(
      'Thursday, June 4, 10:00–11:30 PM',
    );
  });

  it('plain spaces only, and a date or time that is not one said as given', () => {
    const f = deskFormat('en-US', 'America/Los_Angeles');
    expect(f.window('2026-06-04', '09:00', '11:00')).not.toMatch(/[\u00a0\u202f\u2009]/);
    expect(deskFormat('de-DE', 'Europe/Berlin').money(12900, 'EUR')).toBe('129,00 €');
    expect(f.date('someday')).toBe('someday');
    expect(f.window('2026-06-04', 'morning', '11:00')).toBe('morning–11:00');
  });
});
