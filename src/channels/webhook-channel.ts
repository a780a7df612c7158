import type { Logger } from 'pino';
import { ChannelError, NO_LIMITS, type Channel, type OutboundMessage } from './channel.ts';
import { signWebhook } from './standard-webhooks.ts';

export interface WebhookChannelOptions {
  /** Where outbound messages are POSTed; without one they are only logged (and kept in history). */
  url: string | undefined;
  logger: Logger;
  /** The HMAC key every POST is signed with (Standard Webhooks); unsigned without one. */
  signingKey?: Buffer | undefined;
  /**
   * Wall time for `webhook-timestamp` (the receiver checks it against its own clock, so never a
   * virtual one). Default: the system clock.
   */
  now?: () => Date;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The wire body POSTed for each outbound message. */
export function webhookBody(message: OutboundMessage) {
  return {
    id: message.id,
    participant_id: message.participantId,
    to: message.recipient,
    kind: message.kind,
    text: message.text,
    ...(message.poll ? { poll: { question: message.poll.question, options: message.poll.options } } : {}),
    created_at: message.createdAt.toISOString(),
  };
}

/**
 * The generic HTTP channel: POSTs JSON to `OUTBOUND_WEBHOOK_URL` with an `Idempotency-Key`, and
 * with a signing key the Standard Webhooks headers (`webhook-id` is the idempotency key, so a
 * retry keeps it). 2xx is delivered; 408, 429 and 5xx and network errors are retried; other 4xx
 * are final.
 */
export function createWebhookChannel(options: WebhookChannelOptions): Channel {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const now = options.now ?? (() => new Date());
  return {
    name: 'webhook',
    capabilities: NO_LIMITS,
    async send(message, context) {
      const signal = context?.signal;
      if (!options.url) {
        options.logger.info(
          { outboxId: message.id, conversationId: message.conversationId, text: message.text },
          'outbound message (no OUTBOUND_WEBHOOK_URL set)',
        );
        return;
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      // Signed as sent: the signature covers these exact bytes.
      const body = JSON.stringify(webhookBody(message));
      const signature = options.signingKey ? signWebhook(options.signingKey, message.idempotencyKey, body, now()) : {};
      let response: Response;
      try {
        response = await doFetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': message.idempotencyKey, ...signature },
          body,
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        throw new ChannelError(`webhook unreachable: ${(error as Error).message}`, { retryable: true, cause: error });
      }
      await response.body?.cancel();
      if (response.ok) return;
      const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
      throw new ChannelError(`webhook answered ${response.status}`, { retryable });
    },
  };
}
