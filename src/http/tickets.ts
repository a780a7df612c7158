import { randomBytes } from 'node:crypto';

export const TICKET_TTL_MS = 60_000;

/**
 * Short-lived, single-use tickets for browser WebSockets (which cannot send an Authorization
 * header): issued to a bearer-token holder, then presented once as `?ticket=` on the upgrade.
 */
export class TicketBook {
  /** Each ticket's expiry, and the conversation id it opens (null: any). */
  readonly #tickets = new Map<string, { expiresAt: number; scope: string | null }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A ticket for the stream of `scope` (the id in the stream's path), or of any conversation. */
  issue(scope: string | null = null): { ticket: string; expiresAt: Date } {
    this.#prune();
    const ticket = randomBytes(24).toString('base64url');
    const expiresAt = this.#now() + TICKET_TTL_MS;
    this.#tickets.set(ticket, { expiresAt, scope });
    return { ticket, expiresAt: new Date(expiresAt) };
  }

  /** True once per valid ticket presented for a stream it may open; the ticket is spent either way. */
  redeem(ticket: string, conversationId: string): boolean {
    const entry = this.#tickets.get(ticket);
    this.#tickets.delete(ticket);
    return entry !== undefined && entry.expiresAt > this.#now() && (entry.scope === null || entry.scope === conversationId);
  }

  #prune(): void {
    const now = this.#now();
    for (const [ticket, { expiresAt }] of this.#tickets) if (expiresAt <= now) this.#tickets.delete(ticket);
  }
}
