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

/**
 * The E.164 number behind a WhatsApp `wa_id` (digits only), or null. WhatsApp keeps two legacy
 * forms that are not valid numbers today: Mexican mobiles with the old `1` after `52`, and
 * Brazilian mobiles without the ninth digit; both are mapped to the number people enrol with.
 */
export function phoneFromWhatsAppId(waId: string): string | null {
  if (!/^\d{6,15}$/.test(waId)) return null;
  const direct = canonicalPhone(`+${waId}`);
  if (direct) return direct;
  if (/^521\d{10}$/.test(waId)) return canonicalPhone(`+52${waId.slice(3)}`);
  if (/^55\d{2}[6-9]\d{7}$/.test(waId)) return canonicalPhone(`+${waId.slice(0, 4)}9${waId.slice(4)}`);
  return null;
}
