import { z } from 'zod';
import { ChannelError, type Channel, type SendReceipt } from '../channel.ts';
import { callProvider, retryableStatus } from '../http-send.ts';

export const TWILIO_CHANNEL = 'twilio';
/** The most a Messages API `Body` may hold; the carrier splits it into segments itself. */
export const SMS_MAX_LENGTH = 1600;
/** Twilio error codes a later attempt cannot fix: unsubscribed, invalid or unreachable numbers. */
const FINAL_CODES = new Set([21211, 21408, 21610, 21612, 21614, 21606, 30004, 30006]);
/** Refusals that pass (answered 400 all the same): the sender's queue is full, too many requests. */
const PASSING_CODES = new Set([21611, 20429, 14107]);
/** The recipient replied STOP to this sender (maybe before we knew them, or on another of our numbers). */
const UNSUBSCRIBED = 21610;

export interface TwilioChannelOptions {
  accountSid: string;
  authToken: string;
  /** E.164 sender, or a Messaging Service SID (MG…). */
  from: string;
  apiBaseUrl: string;
  /** Where status callbacks are asked for; none without it. */
  publicBaseUrl: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const created = z.looseObject({ sid: z.string().min(1) });
const twilioError = z.looseObject({ code: z.number().optional(), message: z.string().optional() });

/**
 * Twilio Programmable Messaging (SMS), sent with the REST Messages API. Polls arrive here already
 * rendered as numbered text (the capabilities say there are none). Contacts are keyed by their
 * E.164 number: the engine refuses one who sent STOP before calling `send`, and records the
 * opt-out Twilio reports (21610) when it learns of it here.
 */
export function createTwilioChannel(options: TwilioChannelOptions): Channel {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.apiBaseUrl}/2010-04-01/Accounts/${options.accountSid}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;

  return {
    name: TWILIO_CHANNEL,
    capabilities: { polls: null, maxTextLength: SMS_MAX_LENGTH, contactIdOf: (recipient) => recipient },
    async send(message, context): Promise<SendReceipt> {
      const form = new URLSearchParams({ To: message.recipient, Body: message.text });
      form.set(options.from.startsWith('MG') ? 'MessagingServiceSid' : 'From', options.from);
      if (options.publicBaseUrl) form.set('StatusCallback', `${options.publicBaseUrl}/webhooks/twilio/status`);
      const answer = await callProvider(
        doFetch,
        url,
        {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
          timeoutMs: options.timeoutMs ?? 10_000,
          signal: context?.signal,
        },
        'Twilio',
      );
      const accepted = created.safeParse(answer.body);
      if (answer.status >= 200 && answer.status < 300 && accepted.success)
        return { providerMessageId: accepted.data.sid };
      const error = twilioError.safeParse(answer.body);
      const code = error.success ? error.data.code : undefined;
      const retryable =
        code !== undefined && FINAL_CODES.has(code)
          ? false
          : retryableStatus(answer.status) || (code !== undefined && PASSING_CODES.has(code));
      throw new ChannelError(
        `Twilio answered ${answer.status}${code ? ` (code ${code})` : ''}: ` +
          ((error.success && error.data.message) || 'no error body'),
        { retryable, optedOut: code === UNSUBSCRIBED },
      );
    },
  };
}
