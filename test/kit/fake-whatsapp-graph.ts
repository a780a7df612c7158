import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackFake, readBody, sendJson } from './loopback-fake.ts';

/** The Graph API version the fake serves, as in `https://graph.facebook.com/v23.0/...`. */
export const GRAPH_API_VERSION = 'v23.0';

/** One send the fake accepted: the phone number id from the path and the parsed JSON body. */
export interface GraphSend {
  phoneNumberId: string;
  body: any;
}

/**
 * A scripted failure for the next authorized send. `message` defaults to a known title for the
 * code (131047 "Re-engagement message", 130429 "Rate limit hit", 1 "An unknown error has occurred.").
 */
export interface GraphFailure {
  status: number;
  code: number;
  message?: string;
}

/** Titles Cloud API uses for the codes tests script most often (from Meta's error-code list). */
const DEFAULT_MESSAGES: Record<number, string> = {
  1: 'An unknown error has occurred.',
  2: 'Service temporarily unavailable',
  100: 'Invalid parameter',
  130429: 'Rate limit hit',
  131026: 'Message undeliverable',
  131047: 'Re-engagement message',
  131056: '(Business Account, Consumer Account) pair rate limit hit',
};

/**
 * A fake of the WhatsApp Cloud API send endpoint on loopback:
 * `POST {baseUrl}/{phoneNumberId}/messages` with `Authorization: Bearer <accessToken>` and a JSON
 * body. It answers like Graph does: 401 with an OAuthException (code 190) for a wrong or missing
 * token, 400 (code 100) for a body that is not JSON or lacks `messaging_product` / a recipient,
 * the next scripted entry of `failures` if any, and otherwise 200 with
 * `{messaging_product, contacts:[{input, wa_id}], messages:[{id:'wamid.…'}]}`.
 * Only the header form of the token is accepted (not `?access_token=`).
 */
export class FakeWhatsAppGraph extends LoopbackFake<GraphSend> {
  /** Every request that reached the messages route, whatever the answer. */
  readonly attempts: Array<GraphSend & { status: number }> = [];
  /** Consumed front first by authorized, well-formed sends. */
  failures: GraphFailure[] = [];
  /** The wamid the fake answered each accepted send with, in the order of `sent`. */
  readonly ids: string[] = [];
  readonly #accessToken: string;
  #sequence = 0;

  constructor(options: { accessToken: string }) {
    super('WhatsApp', (response, error) => graphError(response, 500, 1, String(error)));
    this.#accessToken = options.accessToken;
  }

  override start(): Promise<this> {
    return super.start(`/${GRAPH_API_VERSION}`);
  }

  /** Text bodies of accepted `type: 'text'` sends, in order. */
  texts(): string[] {
    return this.sent.filter((send) => send.body?.type === 'text').map((send) => String(send.body.text?.body));
  }

  /** Accepted sends whose `to` has these digits (a leading `+` or formatting is ignored). */
  to(digits: string): GraphSend[] {
    const wanted = onlyDigits(digits);
    return this.sent.filter((send) => onlyDigits(String(send.body?.to ?? '')) === wanted);
  }

  protected async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0] ?? '';
    const match = new RegExp(`^/${GRAPH_API_VERSION}/([^/]+)/messages$`).exec(path);
    if (request.method !== 'POST' || !match?.[1]) {
      return graphError(response, 400, 100, `Unsupported ${request.method} request to ${path}`, 'GraphMethodException');
    }
    const phoneNumberId = decodeURIComponent(match[1]);
    const raw = await readBody(request);
    const body = parseJson(raw);
    const record = (status: number) => this.attempts.push({ phoneNumberId, body, status });

    if (request.headers.authorization !== `Bearer ${this.#accessToken}`) {
      record(401);
      return graphError(response, 401, 190, 'Invalid OAuth access token - Cannot parse access token');
    }
    const invalid = body === undefined ? 'Request body is not valid JSON' : missingParameter(body);
    if (invalid) {
      record(400);
      return graphError(response, 400, 100, invalid);
    }
    const failure = this.failures.shift();
    if (failure) {
      record(failure.status);
      return graphError(
        response,
        failure.status,
        failure.code,
        failure.message ?? DEFAULT_MESSAGES[failure.code] ?? 'Error',
      );
    }
    record(200);
    const acceptance = this.#acceptance(body);
    this.ids.push(acceptance.messages[0]!.id);
    this.accept({ phoneNumberId, body });
    sendJson(response, 200, acceptance);
  }

  #acceptance(body: any): { messaging_product: string; contacts: unknown[]; messages: Array<{ id: string }> } {
    this.#sequence += 1;
    const contact =
      body.to !== undefined
        ? { input: body.to, wa_id: onlyDigits(String(body.to)) }
        : { input: body.recipient, user_id: body.recipient };
    // Real wamids are base64 of an opaque binary record; only uniqueness matters here.
    const opaque = Buffer.concat([Buffer.from(`FAKE${this.#sequence}:`), randomBytes(12)]).toString('base64');
    return { messaging_product: 'whatsapp', contacts: [contact], messages: [{ id: `wamid.${opaque}` }] };
  }
}

/** Graph's error envelope: `{error:{message, type, code, error_data, fbtrace_id}}`. */
function graphError(
  response: ServerResponse,
  status: number,
  code: number,
  message: string,
  type = 'OAuthException',
): void {
  sendJson(response, status, {
    error: {
      message: `(#${code}) ${message}`,
      type,
      code,
      error_data: { messaging_product: 'whatsapp', details: message },
      fbtrace_id: `A${randomBytes(15).toString('base64url')}`,
    },
  });
}

function missingParameter(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return 'Request body must be a JSON object';
  if (body.messaging_product !== 'whatsapp') return 'The parameter messaging_product is required.';
  if (typeof body.to !== 'string' && typeof body.recipient !== 'string') return 'The parameter to is required.';
  return undefined;
}

function onlyDigits(value: string): string {
  return value.replace(/\D/g, '');
}

function parseJson(raw: string): any {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
