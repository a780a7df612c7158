import type { TokenSigner } from './signed-token.ts';

export const TICKET_TTL_MS = 60_000;

/**
 * Short-lived, single-use tickets for browser WebSockets and event streams (which cannot send an
 * Authorization header): issued to a token holder, then presented once as `?ticket=`. Signed, so
 * any process of the deployment redeems them; "once" is per process (decision 010): each process
 * remembers the tickets it redeemed until they expire.
 */
export class TicketBook {
  readonly #signer: TokenSigner;
  /** Redeemed tickets' nonces, with their expiry. */
  readonly #redeemed = new Map<string, number>();

  constructor(signer: TokenSigner) {
    this.#signer = signer;
  }

  /** A ticket for the stream of `scope` (the id in the stream's path), or of any conversation. */
  issue(scope: string | null = null): { ticket: string; expiresAt: Date } {
    const exp = this.#signer.now() + TICKET_TTL_MS;
    const { token } = this.#signer.sign({ kind: 'ticket', conversation: scope, scopes: ['read'], exp });
    return { ticket: token, expiresAt: new Date(exp) };
  }

  /** True once per valid ticket presented for a stream it may open. */
  redeem(ticket: string, conversationId: string): boolean {
    this.#prune();
    const verified = this.#signer.verify(ticket);
    if (verified.status !== 'valid') return false;
    const { kind, conversation, nonce, exp } = verified.claims;
    if (kind !== 'ticket' || (conversation !== null && conversation !== conversationId) || this.#redeemed.has(nonce))
      return false;
    this.#redeemed.set(nonce, exp);
    return true;
  }

  /** Oldest first, up to the first one still live (all tickets live equally long, so that is about right). */
  #prune(): void {
    const now = this.#signer.now();
    for (const [nonce, exp] of this.#redeemed) {
      if (exp > now) return;
      this.#redeemed.delete(nonce);
    }
  }
}
