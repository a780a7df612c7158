import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks (https://www.standardwebhooks.com, v1 symmetric signatures): what the
 * outbound webhook sends and what its receivers check.
 *
 * - `webhook-id`: the message's id, the same on every retry (receivers drop duplicates by it);
 * - `webhook-timestamp`: unix seconds of this attempt;
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, several
 *   space-separated when keys rotate.
 */
export interface WebhookSignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The HMAC key of a configured secret: the spec's `whsec_<base64>` form is base64-decoded (what
 * Standard Webhooks libraries expect); any other text is used as is, as its UTF-8 bytes.
 * Undefined when a `whsec_` value is not base64.
 */
export function webhookSigningKey(secret: string): Buffer | undefined {
  if (!secret.startsWith('whsec_')) return Buffer.from(secret, 'utf8');
  const encoded = secret.slice('whsec_'.length);
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(encoded)) return undefined;
  return Buffer.from(encoded, 'base64');
}

function sign(key: Buffer, id: string, timestamp: number, body: string): string {
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
}

/** The three headers for `body`, exactly the bytes sent, at `now`. */
export function signWebhook(key: Buffer, id: string, body: string, now: Date): WebhookSignatureHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${sign(key, id, timestamp, body)}`,
  };
}

/**
 * A receiver's check: one of the `v1` signatures matches `body` (the raw bytes received, never
 * re-serialised JSON) and the timestamp is within `toleranceSeconds` of `now` (replays of old
 * deliveries fail). Compared in constant time.
 */
export function verifyWebhook(
  key: Buffer,
  headers: { id: string | undefined; timestamp: string | undefined; signature: string | undefined },
  body: string,
  now: Date,
  toleranceSeconds = 300,
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(key, id, Number(timestamp), body), 'base64');
  return signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
