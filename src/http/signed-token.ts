import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

export const SCOPES = ['read', 'write'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What a signed token says. `ticket`: opens one stream once (decision 010); `client`: a
 * conversation's stream and/or its messages until it expires. `conversation` null: any (tickets only).
 */
const claimsSchema = z.strictObject({
  kind: z.enum(['ticket', 'client']),
  conversation: z.string().min(1).max(200).nullable(),
  scopes: z.array(z.enum(SCOPES)).max(SCOPES.length),
  /** Expiry, ms since the epoch. */
  exp: z.number().int().positive(),
  nonce: z.string().min(16).max(64),
});
export type TokenClaims = z.output<typeof claimsSchema>;

export type Verified =
  { status: 'valid'; claims: TokenClaims } | { status: 'expired'; claims: TokenClaims } | { status: 'invalid' };

/** Every signed token starts with this (a version: a new format gets a new prefix). */
export const TOKEN_PREFIX = 'pp1.';

/**
 * Signs and verifies tokens that every process of a deployment accepts: HMAC-SHA256 over the
 * claims, with a key derived from a secret they share (`TOKEN_SECRET`, else `API_TOKEN`).
 */
export class TokenSigner {
  readonly #key: Buffer;
  readonly #now: () => number;

  /** `secret` undefined: a random key, valid in this process only (no auth is configured then). */
  constructor(secret: string | undefined, now: () => number = Date.now) {
    this.#key =
      secret === undefined
        ? randomBytes(32)
        : Buffer.from(hkdfSync('sha256', secret, 'promptpipe', 'signed-token-v1', 32));
    this.#now = now;
  }

  now(): number {
    return this.#now();
  }

  sign(claims: Omit<TokenClaims, 'nonce'>): { token: string; claims: TokenClaims } {
    const full: TokenClaims = { ...claims, nonce: randomBytes(16).toString('base64url') };
    const body = `${TOKEN_PREFIX}${Buffer.from(JSON.stringify(full)).toString('base64url')}`;
    return { token: `${body}.${this.#mac(body).toString('base64url')}`, claims: full };
  }

  /** `invalid` for anything not signed with our key (or malformed); `expired` only for a genuine token. */
  verify(token: string): Verified {
    const dot = token.lastIndexOf('.');
    if (!token.startsWith(TOKEN_PREFIX) || dot <= TOKEN_PREFIX.length) return { status: 'invalid' };
    const body = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.#mac(body);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return { status: 'invalid' };
    const claims = parseClaims(body.slice(TOKEN_PREFIX.length));
    if (!claims) return { status: 'invalid' };
    return claims.exp > this.#now() ? { status: 'valid', claims } : { status: 'expired', claims };
  }

  #mac(body: string): Buffer {
    return createHmac('sha256', this.#key).update(body).digest();
  }
}

function parseClaims(encoded: string): TokenClaims | undefined {
  try {
    const parsed = claimsSchema.safeParse(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
