import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

export type PhoneRegion = CountryCode;

/** Separators people and systems put in numbers: spaces, dashes, dots, brackets, slashes. */
const SEPARATORS = /[\s\-.()/\u00a0]/g;

/** `region` as a region libphonenumber knows (ISO 3166-1 alpha-2, any case), or null. */
export function phoneRegion(region: string): PhoneRegion | null {
  const upper = region.trim().toUpperCase();
  return isSupportedCountry(upper) ? upper : null;
}

/**
 * The E.164 form (`+14165550123`) of a phone number, or null when it is not a valid number.
 * Read, in order, as:
 * 1. international (`+…` or `00…`), separators allowed;
 * 2. national in `region` (`(415) 555-0100`, `020 7946 0958`), when a region is given;
 * 3. digits only that form a valid number with a `+` in front (`14165550151`: how the Go
 *    PromptPipe and WhatsApp store numbers).
 * The region goes first so that `4155550100` in the US is San Francisco, not a Swiss number.
 */
export function canonicalPhone(raw: string, region?: PhoneRegion): string | null {
  const trimmed = raw.trim();
  if (trimmed.startsWith('+') || trimmed.startsWith('00')) {
    return validE164(trimmed.startsWith('00') ? `+${trimmed.slice(2)}` : trimmed);
  }
  const digits = trimmed.replace(SEPARATORS, '');
  if (!/^\d{4,17}$/.test(digits)) return null;
  return (region && validE164(digits, region)) || validE164(`+${digits}`);
}

/** The extension written after a number (`ext. 5`, `x5`, `#5`), if any: the reason such a number is refused. */
export function phoneExtension(raw: string): string | undefined {
  return parsePhoneNumberFromString(raw.trim())?.ext;
}

/**
 * Parsing with the full metadata costs tens of microseconds, and the same senders write again and
 * again: the last results are kept (a pure function of its input; bounded, oldest out first).
 */
const parsedNumbers = new Map<string, string | null>();
const PARSED_KEPT = 10_000;

function validE164(text: string, region?: PhoneRegion): string | null {
  const key = `${region ?? ''}|${text}`;
  const known = parsedNumbers.get(key);
  if (known !== undefined) return known;
  const parsed = parsePhoneNumberFromString(text, region);
  // Messages reach a number, not an extension: `+1 416 555 0123 ext. 5` is not the number alone.
  const number = parsed?.isValid() && parsed.ext === undefined ? parsed.number : null;
  if (parsedNumbers.size >= PARSED_KEPT) parsedNumbers.delete(parsedNumbers.keys().next().value!);
  parsedNumbers.set(key, number);
  return number;
}

/**
 * The E.164 number behind a WhatsApp `wa_id` (digits only), or null. WhatsApp keeps two legacy
 * forms that are not valid numbers today: Mexican mobiles with the old `1` after `52`, and
 * Brazilian mobiles without the ninth digit; both are mapped to the number people enrol with.
 */
export function phoneFromWhatsAppId(waId: string): string | null {
  if (!/^\d{6,15}$/.test(waId)) return null;
  const direct = validE164(`+${waId}`);
  if (direct) return direct;
  if (/^521\d{10}$/.test(waId)) return validE164(`+52${waId.slice(3)}`);
  if (/^55\d{2}[6-9]\d{7}$/.test(waId)) return validE164(`+${waId.slice(0, 4)}9${waId.slice(4)}`);
  return null;
}
