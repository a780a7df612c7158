import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackFake, readBody, sendJson } from './loopback-fake.ts';

/** One message the fake accepted: the account from the path and the form fields. */
export interface TwilioSend {
  accountSid: string;
  /** Form fields; for a repeated name (e.g. several `MediaUrl`) this holds the first value. */
  params: Record<string, string>;
  /** The whole form, with every value of repeated names. */
  form: URLSearchParams;
}

/**
 * A scripted failure for the next authenticated send. `message` defaults to Twilio's title for
 * the code (21610 "Attempt to send to unsubscribed recipient", 20429 "Too Many Requests", …).
 */
export interface TwilioFailure {
  status: number;
  code: number;
  message?: string;
}

const DEFAULT_MESSAGES: Record<number, string> = {
  20003: 'Authenticate',
  20429: 'Too Many Requests',
  20500: 'Internal Server Error',
  21211: "Invalid 'To' Phone Number",
  21602: 'Message body is required.',
  21603: "A 'From' phone number is required.",
  21604: "A 'To' phone number is required.",
  21610: 'Attempt to send to unsubscribed recipient',
  63016: 'Failed to send freeform message because you are outside the allowed window. Please use a Template.',
};

/**
 * A fake of Twilio's Messages REST API on loopback:
 * `POST {baseUrl}/2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded, HTTP Basic auth
 * `AccountSid:AuthToken`. It answers 401 (code 20003) unless the credentials and the path's
 * account match the constructor options; 400 (21604 / 21603 / 21602) when `To`, `From` (or
 * `MessagingServiceSid`) or content (`Body` / `MediaUrl` / `ContentSid`) is missing; the next
 * entry of `failures` if any; otherwise 201 with a Message resource (`status` `queued`, or
 * `accepted` with a Messaging Service).
 */
export class FakeTwilioApi extends LoopbackFake<TwilioSend> {
  /** Every request that reached the Messages route, whatever the answer. */
  readonly attempts: Array<TwilioSend & { status: number }> = [];
  /** Consumed front first by authenticated, well-formed sends. */
  failures: TwilioFailure[] = [];
  /** The Message SID the fake answered each accepted send with, in the order of `sent`. */
  readonly sids: string[] = [];
  readonly #accountSid: string;
  readonly #authToken: string;

  constructor(options: { accountSid: string; authToken: string }) {
    super('Twilio', (response, error) => twilioError(response, 500, 20500, String(error)));
    this.#accountSid = options.accountSid;
    this.#authToken = options.authToken;
  }

  /** `Body` of every accepted message, in order (`''` when it had none). */
  bodies(): string[] {
    return this.sent.map((send) => send.params.Body ?? '');
  }

  /** Accepted messages addressed to `to` (exact match, e.g. `+14165550199` or `whatsapp:+1…`). */
  to(to: string): TwilioSend[] {
    return this.sent.filter((send) => send.params.To === to);
  }

  protected async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0] ?? '';
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(path);
    if (request.method !== 'POST' || !match?.[1]) {
      return twilioError(response, 404, 20404, `The requested resource ${path} was not found`);
    }
    const accountSid = decodeURIComponent(match[1]);
    const form = new URLSearchParams(await readBody(request));
    const params: Record<string, string> = {};
    for (const [name, value] of form) params[name] ??= value;
    const record = (status: number) => this.attempts.push({ accountSid, params, form, status });

    if (!this.#authorized(request.headers.authorization, accountSid)) {
      record(401);
      response.setHeader('www-authenticate', 'Basic realm="Twilio API"');
      return twilioError(response, 401, 20003);
    }
    const invalid = missingParameter(params);
    const failure = invalid ?? this.failures.shift();
    if (failure) {
      record(failure.status);
      return twilioError(response, failure.status, failure.code, failure.message);
    }
    record(201);
    const send = { accountSid, params, form };
    const resource = messageResource(send);
    this.sids.push(String(resource.sid));
    this.accept(send);
    sendJson(response, 201, resource);
  }

  #authorized(header: string | undefined, pathAccountSid: string): boolean {
    const [scheme, encoded] = (header ?? '').split(' ');
    if (scheme !== 'Basic' || !encoded) return false;
    const expected = `${this.#accountSid}:${this.#authToken}`;
    return Buffer.from(encoded, 'base64').toString('utf8') === expected && pathAccountSid === this.#accountSid;
  }
}

/** Twilio's REST error body: `{code, message, more_info, status}`. */
function twilioError(response: ServerResponse, status: number, code: number, message?: string): void {
  sendJson(response, status, {
    code,
    message: message ?? DEFAULT_MESSAGES[code] ?? 'Error',
    more_info: `https://www.twilio.com/docs/errors/${code}`,
    status,
  });
}

function missingParameter(params: Record<string, string>): TwilioFailure | undefined {
  if (!params.To) return { status: 400, code: 21604 };
  if (!params.From && !params.MessagingServiceSid) return { status: 400, code: 21603 };
  if (!params.Body && !params.MediaUrl && !params.ContentSid) return { status: 400, code: 21602 };
  return undefined;
}

/** The Message resource Twilio returns on create, as far as a client reads it. */
function messageResource({ accountSid, params, form }: TwilioSend): Record<string, unknown> {
  const numMedia = form.getAll('MediaUrl').length;
  const sid = `${numMedia > 0 ? 'MM' : 'SM'}${randomBytes(16).toString('hex')}`;
  const viaService = params.MessagingServiceSid !== undefined;
  const now = rfc2822(new Date());
  const uri = `/2010-04-01/Accounts/${accountSid}/Messages/${sid}`;
  return {
    account_sid: accountSid,
    api_version: '2010-04-01',
    body: params.Body ?? '',
    date_created: now,
    date_sent: null,
    date_updated: now,
    direction: 'outbound-api',
    error_code: null,
    error_message: null,
    from: params.From ?? null,
    messaging_service_sid: params.MessagingServiceSid ?? null,
    num_media: String(numMedia),
    // With a Messaging Service no sender is chosen yet, so Twilio reports 0 segments.
    num_segments: viaService ? '0' : String(segmentCount(params.Body ?? '')),
    price: null,
    price_unit: 'USD',
    sid,
    status: viaService ? 'accepted' : 'queued',
    subresource_uris: { media: `${uri}/Media.json`, feedback: `${uri}/Feedback.json` },
    to: params.To,
    uri: `${uri}.json`,
  };
}

const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ ' +
  '!"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXTENDED = '^{}\\[~]|€\f';

/** SMS segments: GSM-7 (160 / 153 per part, extension characters count twice) or UCS-2 (70 / 67). */
export function segmentCount(body: string): number {
  let septets = 0;
  for (const char of body) {
    if (GSM7_BASIC.includes(char)) septets += 1;
    else if (GSM7_EXTENDED.includes(char)) septets += 2;
    else return ucs2Segments(body);
  }
  return septets <= 160 ? 1 : Math.ceil(septets / 153);
}

function ucs2Segments(body: string): number {
  return body.length <= 70 ? 1 : Math.ceil(body.length / 67);
}

/** `Thu, 28 May 2026 12:00:00 +0000`, the date format of Twilio's 2010-04-01 API. */
function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}
