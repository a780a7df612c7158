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
    const checked = this.#check(ticket, conversationId);
    if ('problem' in checked) return false;
    this.#redeemed.set(checked.nonce, checked.exp);
    return true;
  }

  /** What is wrong with a ticket for the stream of `conversationId`, in words; undefined when nothing is. */
  problem(ticket: string, conversationId: string): string | undefined {
    const checked = this.#check(ticket, conversationId);
    return 'problem' in checked ? checked.problem : undefined;
  }

  #check(ticket: string, conversationId: string): { problem: string } | { nonce: string; exp: number } {
    const verified = this.#signer.verify(ticket);
    if (verified.status === 'invalid' || verified.claims.kind !== 'ticket') return { problem: 'is not a valid ticket' };
    if (verified.status === 'expired') return { problem: 'has expired (a ticket lasts 60 s)' };
    const { conversation, nonce, exp } = verified.claims;
    if (conversation !== null && conversation !== conversationId) return { problem: 'is for another conversation' };
    if (this.#redeemed.has(nonce)) return { problem: 'was used already (a ticket opens one stream, once)' };
    return { nonce, exp };
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
