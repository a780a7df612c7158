import { z } from 'zod';
import { ChannelError, type Channel, type OutboundMessage, type SendReceipt } from '../channel.ts';
import { callProvider, retryableStatus } from '../http-send.ts';

export const WHATSAPP_CHANNEL = 'whatsapp';
/** Free-form messages are allowed for this long after the person's last message. */
export const SERVICE_WINDOW_MS = 24 * 3_600_000;
/** Meta: "re-engagement message", the window is closed (answered at once, or later as a failed status). */
export const WINDOW_CLOSED = 131047;
/**
 * Ends the idempotency key of a message sent again as the template because Meta reported, after
 * accepting it, that the window had closed (our record of the window was off).
 */
export const TEMPLATE_RESEND = '#template';
/** Graph error codes that mean "slow down" or a passing fault. */
const TRANSIENT_CODES = new Set([1, 2, 4, 17, 341, 80007, 130429, 131000, 131016, 131048, 131056]);
/** Graph error codes of a bad or expired access token: every send fails until it is replaced. */
const AUTH_CODES = new Set([190, 102, 10, 200]);
const MAX_BUTTONS = 3;
const BUTTON_TITLE_MAX = 20;
const LIST_ROW_TITLE_MAX = 24;
const INTERACTIVE_BODY_MAX = 1024;
/** Meta caps a template's body, its own text and the parameters together, at 1,024 characters. */
const TEMPLATE_BODY_MAX = 1024;
const TEXT_BODY_MAX = 4096;

export interface WhatsAppChannelOptions {
  accessToken: string;
  phoneNumberId: string;
  apiBaseUrl: string;
  template: WhatsAppTemplate | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The approved template for sends outside the window; `textLength` counts its own body text besides `{{1}}`. */
export interface WhatsAppTemplate {
  name: string;
  language: string;
  textLength: number;
}

const sendAnswer = z.looseObject({ messages: z.array(z.looseObject({ id: z.string() })).min(1) });
const graphError = z.looseObject({
  error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }),
});

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
    if (answer.status >= 200 && answer.status < 300 && accepted.success)
      return { providerMessageId: accepted.data.messages[0]!.id };
    const error = graphError.safeParse(answer.body);
    const code = error.success ? error.data.error.code : undefined;
    // An expired token fails every send until someone replaces it: keep the message for then.
    const retryable =
      retryableStatus(answer.status) ||
      answer.status === 401 ||
      (code !== undefined && (TRANSIENT_CODES.has(code) || AUTH_CODES.has(code)));
    throw new WhatsAppSendError(
      `WhatsApp Cloud API answered ${answer.status}${code ? ` (code ${code})` : ''}: ` +
        (error.success ? error.data.error.message : 'no error body'),
      { retryable, code },
    );
  };

  const sendTemplate = (message: OutboundMessage, to: Recipient, signal: AbortSignal | undefined) => {
    if (!options.template) {
      throw new ChannelError(
        'the 24-hour WhatsApp window is closed and WHATSAPP_TEMPLATE_NAME is not set, so this message cannot be sent',
        { retryable: false },
      );
    }
    return post({ ...envelope(to), ...templateBody(message, options.template) }, signal);
  };

  return {
    name: WHATSAPP_CHANNEL,
    // With a template, any message may have to go out as its parameter: the parts must fit there.
    capabilities: {
      polls: { maxOptions: 10, maxOptionLength: LIST_ROW_TITLE_MAX },
      maxTextLength: options.template ? templateParameterMax(options.template) : TEXT_BODY_MAX,
      serviceWindowMs: SERVICE_WINDOW_MS,
      contactIdOf: (recipient) => (recipient.startsWith('+') ? recipient.slice(1) : recipient),
    },
    async send(message, context): Promise<SendReceipt> {
      const to = recipientOf(message.recipient);
      const signal = context?.signal;
      if (message.idempotencyKey.endsWith(TEMPLATE_RESEND) || context?.windowOpen === false)
        return sendTemplate(message, to, signal);
      try {
        return await post({ ...envelope(to), ...freeFormBody(message) }, signal);
      } catch (error) {
        // Our record of the window was off (a message we never saw, clocks): use the template.
        if (error instanceof WhatsAppSendError && error.code === WINDOW_CLOSED && options.template)
          return sendTemplate(message, to, signal);
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

/** Phone numbers (E.164 or a bare wa_id) go in `to` as digits; a business-scoped user id (`US.…`) in `recipient`. */
export function recipientOf(address: string): Recipient {
  if (address.startsWith('+')) return { to: address.slice(1) };
  return /^\d+$/.test(address) ? { to: address } : { recipient: address };
}

function templateParameterMax(template: WhatsAppTemplate): number {
  return Math.max(TEMPLATE_BODY_MAX - template.textLength, 1);
}

function envelope(to: Recipient) {
  return { messaging_product: 'whatsapp', recipient_type: 'individual', ...to };
}

export function freeFormBody(message: Pick<OutboundMessage, 'text' | 'poll'>): object {
  const poll = message.poll;
  if (!poll) return { type: 'text', text: { body: message.text, preview_url: false } };
  const body = { text: clip(poll.question, INTERACTIVE_BODY_MAX) };
  const ids = poll.options.map((_option, index) => `opt:${index + 1}`);
  if (poll.options.length <= MAX_BUTTONS && poll.options.every((title) => [...title].length <= BUTTON_TITLE_MAX)) {
    return {
      type: 'interactive',
      interactive: {
        type: 'button',
        body,
        action: { buttons: poll.options.map((title, index) => ({ type: 'reply', reply: { id: ids[index], title } })) },
      },
    };
  }
  return {
    type: 'interactive',
    interactive: {
      type: 'list',
      body,
      action: {
        button: 'Choose',
        sections: [{ title: 'Options', rows: poll.options.map((title, index) => ({ id: ids[index], title })) }],
      },
    },
  };
}

/** The template with the text as its one body parameter; Meta refuses newlines and long runs of spaces there. */
export function templateBody(message: Pick<OutboundMessage, 'text' | 'poll'>, template: WhatsAppTemplate): object {
  const text = message.poll ? `${message.poll.question} (${message.poll.options.join(' / ')})` : message.text;
  const parameter = clip(text.replace(/\s+/g, ' ').trim(), templateParameterMax(template));
  return {
    type: 'template',
    template: {
      name: template.name,
      language: { code: template.language },
      components: [{ type: 'body', parameters: [{ type: 'text', text: parameter }] }],
    },
  };
}

/** At most `max` characters (code points, never half a surrogate pair), with an ellipsis when cut. */
function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}
