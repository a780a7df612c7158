import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import type { Store } from '../../store/store.ts';
import { ChannelError, type Channel, type OutboundMessage, type SendReceipt } from '../channel.ts';
import { callProvider, retryableStatus } from '../http-send.ts';

export const WHATSAPP_CHANNEL = 'whatsapp';
/** Free-form messages are allowed for this long after the person's last message. */
export const SERVICE_WINDOW_MS = 24 * 3_600_000;
/** Meta: "re-engagement message", the window is closed. */
const WINDOW_CLOSED = 131047;
/** Graph error codes that mean "slow down" or a passing fault. */
const TRANSIENT_CODES = new Set([1, 2, 4, 17, 341, 80007, 130429, 131000, 131016, 131048, 131056]);
const MAX_BUTTONS = 3;
const INTERACTIVE_BODY_MAX = 1024;
const TEMPLATE_PARAMETER_MAX = 1024;

export interface WhatsAppChannelOptions {
  accessToken: string;
  phoneNumberId: string;
  apiBaseUrl: string;
  template: { name: string; language: string } | undefined;
  store: Store;
  clock: Clock;
  logger: Logger;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const sendAnswer = z.looseObject({ messages: z.array(z.looseObject({ id: z.string() })).min(1) });
const graphError = z.looseObject({ error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }) });

/**
 * Outbound WhatsApp Cloud API messages: text, polls as reply buttons (up to 3) or a list (up to
 * 10), and the configured template outside the 24-hour customer-service window (decision 003).
 */
export function createWhatsAppChannel(options: WhatsAppChannelOptions): Channel {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.apiBaseUrl}/${options.phoneNumberId}/messages`;

  const post = async (body: object, signal: AbortSignal | undefined) => {
    const answer = await callProvider(
      doFetch,
      url,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${options.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: options.timeoutMs ?? 10_000,
        signal,
      },
      'WhatsApp Cloud API',
    );
    const accepted = sendAnswer.safeParse(answer.body);
    if (answer.status >= 200 && answer.status < 300 && accepted.success) return { providerMessageId: accepted.data.messages[0]!.id };
    const error = graphError.safeParse(answer.body);
    const code = error.success ? error.data.error.code : undefined;
    const retryable = retryableStatus(answer.status) || (code !== undefined && TRANSIENT_CODES.has(code));
    throw new WhatsAppSendError(`WhatsApp Cloud API answered ${answer.status}${code ? ` (code ${code})` : ''}: ${error.success ? error.data.error.message : 'no error body'}`, { retryable, code });
  };

  const sendTemplate = (message: OutboundMessage, to: Recipient, signal: AbortSignal | undefined) => {
    if (!options.template) {
      throw new ChannelError('the 24-hour WhatsApp window is closed and WHATSAPP_TEMPLATE_NAME is not set, so this message cannot be sent', { retryable: false });
    }
    return post({ ...envelope(to), ...templateBody(message, options.template) }, signal);
  };

  return {
    name: WHATSAPP_CHANNEL,
    // 1024, not the 4096 of a text message: any message may have to go out as the template,
    // whose parameter holds 1024 characters.
    capabilities: { polls: { maxOptions: 10, maxOptionLength: 20 }, maxTextLength: TEMPLATE_PARAMETER_MAX },
    async send(message, signal): Promise<SendReceipt> {
      const to = recipientOf(message.recipient);
      if (!(await windowOpen(options, message))) return sendTemplate(message, to, signal);
      try {
        return await post({ ...envelope(to), ...freeFormBody(message) }, signal);
      } catch (error) {
        // Our record of the window was off (a message we never saw, clocks): use the template.
        if (error instanceof WhatsAppSendError && error.code === WINDOW_CLOSED && options.template) return sendTemplate(message, to, signal);
        throw error;
      }
    },
  };
}

class WhatsAppSendError extends ChannelError {
  readonly code: number | undefined;
  constructor(message: string, options: { retryable: boolean; code: number | undefined }) {
    super(message, { retryable: options.retryable });
    this.code = options.code;
  }
}

type Recipient = { to: string } | { recipient: string };

/** E.164 numbers go in `to` as digits; anything else is a business-scoped user id. */
function recipientOf(address: string): Recipient {
  return address.startsWith('+') ? { to: address.slice(1) } : { recipient: address };
}

function envelope(to: Recipient) {
  return { messaging_product: 'whatsapp', recipient_type: 'individual', ...to };
}

/** Open when the person wrote within 24 h; a reply to someone not enrolled answers their message just now. */
async function windowOpen(options: WhatsAppChannelOptions, message: OutboundMessage): Promise<boolean> {
  if (message.participantId === null) return true;
  const contact =
    (await options.store.findContactOfParticipant(WHATSAPP_CHANNEL, message.participantId)) ??
    (message.recipient.startsWith('+') ? await options.store.getContact(WHATSAPP_CHANNEL, message.recipient.slice(1)) : undefined);
  const last = contact?.lastInboundAt;
  return last !== null && last !== undefined && options.clock.now().getTime() - last.getTime() < SERVICE_WINDOW_MS;
}

export function freeFormBody(message: Pick<OutboundMessage, 'text' | 'poll'>): object {
  const poll = message.poll;
  if (!poll) return { type: 'text', text: { body: message.text, preview_url: false } };
  const body = { text: clip(poll.question, INTERACTIVE_BODY_MAX) };
  const ids = poll.options.map((_option, index) => `opt:${index + 1}`);
  if (poll.options.length <= MAX_BUTTONS) {
    return { type: 'interactive', interactive: { type: 'button', body, action: { buttons: poll.options.map((title, index) => ({ type: 'reply', reply: { id: ids[index], title } })) } } };
  }
  return { type: 'interactive', interactive: { type: 'list', body, action: { button: 'Choose', sections: [{ title: 'Options', rows: poll.options.map((title, index) => ({ id: ids[index], title })) }] } } };
}

/** The template with the text as its one body parameter; Meta refuses newlines and long runs of spaces there. */
export function templateBody(message: Pick<OutboundMessage, 'text' | 'poll'>, template: { name: string; language: string }): object {
  const text = message.poll ? `${message.poll.question} (${message.poll.options.join(' / ')})` : message.text;
  const parameter = clip(text.replace(/\s+/g, ' ').trim(), TEMPLATE_PARAMETER_MAX);
  return {
    type: 'template',
    template: { name: template.name, language: { code: template.language }, components: [{ type: 'body', parameters: [{ type: 'text', text: parameter }] }] },
  };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
