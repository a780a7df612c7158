import { createHmac, timingSafeEqual } from 'node:crypto';

/** Constant-time equality of two strings (false, without comparing, when the lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * WhatsApp Cloud API: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with
 * the app secret>`. Computed over the bytes received, never over re-serialised JSON.
 */
export function whatsappSignatureValid(appSecret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
  return safeEqual(header.trim().toLowerCase(), expected);
}

/**
 * Twilio: `X-Twilio-Signature` is base64 HMAC-SHA1, keyed with the auth token, of the full URL
 * Twilio requested followed by every POST parameter's name and value, sorted by name (a repeated
 * name contributes each of its values, sorted too).
 */
export function twilioSignature(
  authToken: string,
  url: string,
  params: ReadonlyArray<readonly [string, string]>,
): string {
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const sorted = [...params].sort(
    ([nameA, valueA], [nameB, valueB]) => compare(nameA, nameB) || compare(valueA, valueB),
  );
  const data = url + sorted.map(([name, value]) => name + value).join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * Valid for the URL as given, without its port, or with the scheme's default port: Twilio signs
 * one of these depending on how the URL was configured (its own SDK checks all of them).
 */
export function twilioSignatureValid(
  authToken: string,
  url: string,
  params: ReadonlyArray<readonly [string, string]>,
  header: string | undefined,
): boolean {
  if (header === undefined) return false;
  return urlVariants(url).some((candidate) => safeEqual(header.trim(), twilioSignature(authToken, candidate, params)));
}

function urlVariants(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const rest = `${parsed.pathname}${parsed.search}`;
  const credentials = parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : '';
  const base = `${parsed.protocol}//${credentials}${parsed.hostname}`;
  const defaultPort = parsed.protocol === 'https:' ? '443' : '80';
  return [...new Set([url, `${base}${rest}`, `${base}:${parsed.port || defaultPort}${rest}`])];
}
