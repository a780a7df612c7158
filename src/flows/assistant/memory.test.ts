import { describe, expect, it } from 'vitest';
import type { Message } from '../../core/domain.ts';
import { fuse } from './memory.ts';

const message = (conversationId: string, seq: number): Message => ({
  id: `${conversationId}_${seq}`,
  conversationId,
  seq,
  role: 'user',
  kind: 'text',
  text: `${conversationId} ${seq}`,
  poll: null,
  source: 'participant',
  turnId: null,
  createdAt: new Date(seq * 1000),
});

describe('fuse (reciprocal rank fusion)', () => {
  it('puts what both searches found first, then each list by rank, and keeps each message once', () => {
    const [a, b, c, d] = [message('c1', 1), message('c1', 2), message('c2', 1), message('c2', 2)];
    expect(
      fuse(
        [
          [a, b],
          [c, b, d],
        ],
        10,
      ).map((m) => m.id),
    ).toEqual(['c1_2', 'c1_1', 'c2_1', 'c2_2']);
    expect(
      fuse(
        [
          [a, b],
          [c, b, d],
        ],
        2,
      ),
    ).toHaveLength(2);
    // The same seq in two conversations are two messages.
    expect(fuse([[a], [message('c2', 1)]], 10)).toHaveLength(2);
  });
});
