import { canonicalPhone, type PhoneRegion } from '../../core/phone.ts';

/**
 * The Go PromptPipe's three timestamp encodings (fixture README §1.1) as dates: DATETIME text
 * `2026-03-05 15:40:19.030669599+00:00`, RFC 3339 in JSON, and Unix seconds. Null for Go's zero
 * time, empty text and anything unreadable.
 */
export function goTime(value: unknown): Date | null {
  if (typeof value === 'number') return value > 0 ? new Date(value * 1000) : null;
  if (typeof value !== 'string' || isNoTime(value)) return null;
  const iso = value
    .trim()
    .replace(' ', 'T')
    .replace(/(\.\d{3})\d+/, '$1');
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Empty text, or Go's zero `time.Time` (a time never set): no time, not a wrong one. */
export function isNoTime(value: string): boolean {
  return value.trim() === '' || value.startsWith('0001-01-01');
}

/** Go stores digits only (`14165550101`); E.164, with `region` for numbers without a country code. */
export function goPhone(digits: string, region: PhoneRegion | undefined): string | null {
  return canonicalPhone(digits, region);
}

/** Go leaves unknown text columns as `''`; ours are null. */
export function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}
