import { NO_LIMITS, type Channel } from './channel.ts';

export const WEB_CHANNEL = 'web';

/**
 * Web sessions (`POST /api/conversations`): replies reach the caller through the session event
 * stream (WebSocket, SSE, the AI SDK endpoint), which carries every committed message; there is
 * nothing further to hand over, so a delivery succeeds at once.
 */
export function createWebChannel(): Channel {
  return { name: WEB_CHANNEL, capabilities: NO_LIMITS, send: async () => undefined };
}
