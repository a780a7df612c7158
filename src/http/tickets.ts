import { randomBytes } from 'node:crypto';

export const TICKET_TTL_MS = 60_000;

/**
 * Short-lived, single-use tickets for browser WebSockets (which cannot send an Authorization
 * header): issued to a bearer-token holder, then presented once as `?ticket=` on the upgrade.
 */
export class TicketBook {
  readonly #expiries = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  issue(): { ticket: string; expiresAt: Date } {
    this.#prune();
    const ticket = randomBytes(24).toString('base64url');
    const expiresAt = this.#now() + TICKET_TTL_MS;
    this.#expiries.set(ticket, expiresAt);
    return { ticket, expiresAt: new Date(expiresAt) };
  }

  /** True once per valid ticket; the ticket is spent either way. */
  redeem(ticket: string): boolean {
    const expiresAt = this.#expiries.get(ticket);
    this.#expiries.delete(ticket);
    return expiresAt !== undefined && expiresAt > this.#now();
  }

  #prune(): void {
    const now = this.#now();
    for (const [ticket, expiresAt] of this.#expiries) if (expiresAt <= now) this.#expiries.delete(ticket);
  }
}
