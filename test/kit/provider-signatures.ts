import { createHmac } from 'node:crypto';

/**
 * Request signatures computed the way the providers compute them, written from their published
 * descriptions and independent of the production verifiers, so a test that signs with these
 * catches a verifier that hashes the wrong bytes.
 */

/**
 * Meta's `X-Hub-Signature-256` value: `sha256=` + hex HMAC-SHA256 of the raw body bytes, keyed
 * with the App Secret. Pass exactly the bytes that go on the wire.
 */
export function whatsappSignature(appSecret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

/**
 * Twilio's `X-Twilio-Signature` value: base64 HMAC-SHA1, keyed with the Auth Token, of the full
 * URL Twilio requested (query string included) followed by every POST parameter's name and value,
 * parameters sorted by name (plain code-unit order), with no separators.
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string> = {}): string {
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * Twilio's published example for request validation. Source: the "Validate Incoming Requests"
 * page of the twilio-php helper library documentation (docs/usage/validation.rst, as rendered at
 * twilio-php-atbaker.readthedocs.io/en/latest/usage/validation.html and mirrored at
 * docs.huihoo.com/.../twilio-php/docs/usage/validation.rst), which gives this auth token, URL,
 * POST variables and `$signature = 'RSOYDt4T1cUTdK1PDd93/VVr8B8='`. The current twilio.com
 * security page no longer shows the vector.
 */
export const TWILIO_DOCS_EXAMPLE = {
  authToken: '12345',
  url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
  params: {
    CallSid: 'CA1234567890ABCDE',
    Caller: '+14158675309',
    Digits: '1234',
    From: '+14158675309',
    To: '+18005551212',
  },
  signature: 'RSOYDt4T1cUTdK1PDd93/VVr8B8=',
} as const;
