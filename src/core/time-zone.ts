import { IANAZone } from 'luxon';

/**
 * IANA zone names (tzdata 2025b `Zone` lines) that ICU accepts but leaves out of
 * `Intl.supportedValuesOf('timeZone')`: it lists its older alias instead (`Asia/Calcutta` for
 * `Asia/Kolkata`), or nothing (the POSIX-style `EST5EDT`, `UTC`, `Etc/GMT+5`). Listed so their
 * spelling can be restored from any case.
 */
const UNLISTED_IANA_ZONES = [
  'Africa/Asmara',
  'America/Argentina/Buenos_Aires',
  'America/Argentina/Catamarca',
  'America/Argentina/Cordoba',
  'America/Argentina/Jujuy',
  'America/Argentina/Mendoza',
  'America/Atikokan',
  'America/Indiana/Indianapolis',
  'America/Kentucky/Louisville',
  'America/Nuuk',
  'Asia/Ho_Chi_Minh',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Asia/Yangon',
  'Atlantic/Faroe',
  'Europe/Kyiv',
  'Pacific/Chuuk',
  'Pacific/Kanton',
  'Pacific/Pohnpei',
  'CET',
  'CST6CDT',
  'EET',
  'EST',
  'EST5EDT',
  'HST',
  'MET',
  'MST',
  'MST7MDT',
  'PST8PDT',
  'WET',
  'UTC',
  'GMT',
  'Etc/UTC',
  'Etc/GMT',
  ...Array.from({ length: 12 }, (_, index) => `Etc/GMT+${index + 1}`),
  ...Array.from({ length: 14 }, (_, index) => `Etc/GMT-${index + 1}`),
];

/** Lower-cased name → its spelling. */
const spellings = new Map(
  [...Intl.supportedValuesOf('timeZone'), ...UNLISTED_IANA_ZONES].map((zone) => [zone.toLowerCase(), zone]),
);

/** A zone name, not a UTC offset (`+05:00`), which `Intl` also takes. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/**
 * The canonical spelling of an IANA time zone given in any case (`america/toronto` →
 * `America/Toronto`, `est5edt` → `EST5EDT`), or null when it is not one this runtime knows. A
 * name whose spelling is not on record (an old link such as `us/eastern`) becomes the zone the
 * runtime resolves it to (`America/New_York`). Surrounding spaces are ignored.
 */
export function canonicalTimeZone(zone: string): string | null {
  const name = zone.trim();
  if (!ZONE_NAME.test(name) || !IANAZone.isValidZone(name)) return null;
  return (
    spellings.get(name.toLowerCase()) ?? new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone
  );
}

/** True for an IANA zone name this runtime knows, in any case (`America/Toronto`, `EST5EDT`, `UTC`). */
export function isValidTimeZone(zone: string): boolean {
  return canonicalTimeZone(zone) !== null;
}
