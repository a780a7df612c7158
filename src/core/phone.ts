import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * The E.164 form (`+14165550123`) of a phone number written in international format, or null
 * when it is not a valid number. Spaces, dashes, dots and brackets are accepted.
 */
export function canonicalPhone(raw: string): string | null {
  const trimmed = raw.trim();
  if (!trimmed.startsWith('+') && !trimmed.startsWith('00')) return null;
  const parsed = parsePhoneNumberFromString(trimmed.startsWith('00') ? `+${trimmed.slice(2)}` : trimmed);
  if (!parsed || !parsed.isValid()) return null;
  return parsed.number;
}

const knownZones = new Set(Intl.supportedValuesOf('timeZone'));

/** True for an IANA zone name this runtime knows (`America/Toronto`, `UTC`, `Etc/GMT+5`). */
export function isValidTimeZone(zone: string): boolean {
  if (knownZones.has(zone)) return true;
  if (!/^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
