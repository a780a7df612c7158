import { describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { canonicalTimeZone, isValidTimeZone } from './time-zone.ts';

describe('canonicalTimeZone', () => {
  it.each([
    ['America/Toronto', 'America/Toronto'],
    ['america/toronto', 'America/Toronto'],
    ['AMERICA/TORONTO', 'America/Toronto'],
    [' Europe/Berlin ', 'Europe/Berlin'],
    ['america/port-au-prince', 'America/Port-au-Prince'],
    ['EST5EDT', 'EST5EDT'],
    ['est5edt', 'EST5EDT'],
    ['pst8pdt', 'PST8PDT'],
    ['utc', 'UTC'],
    ['etc/gmt+5', 'Etc/GMT+5'],
    ['asia/kolkata', 'Asia/Kolkata'],
    ['Asia/Calcutta', 'Asia/Calcutta'],
    ['europe/kyiv', 'Europe/Kyiv'],
    ['us/eastern', 'America/New_York'],
  ])('spells %j as %j', (given, canonical) => {
    expect(canonicalTimeZone(given)).toBe(canonical);
    expect(DateTime.fromISO('2026-06-01T12:00:00Z').setZone(canonical).isValid).toBe(true);
  });

  it.each(['Mars/Olympus', '', '   ', '+05:00', 'Z', 'America/', '../etc/passwd', 'Factory'])('refuses %j', (given) => {
    expect(canonicalTimeZone(given)).toBeNull();
    expect(isValidTimeZone(given)).toBe(false);
  });

  it('keeps every zone the runtime lists as it is', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    expect(zones.length).toBeGreaterThan(300);
    expect(zones.filter((zone) => canonicalTimeZone(zone) !== zone)).toEqual([]);
    expect(zones.filter((zone) => canonicalTimeZone(zone.toLowerCase()) !== zone)).toEqual([]);
  });
});
