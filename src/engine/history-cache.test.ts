import { describe, expect, it } from 'vitest';
import type { Message } from '../core/domain.ts';
import { HistoryCache } from './history-cache.ts';

const message = (seq: number, text = `m${seq}`, role: Message['role'] = 'user'): Message => ({
  id: `msg_${seq}`,
  conversationId: 'c1',
  seq,
  role,
  kind: 'text',
  text,
  poll: null,
  source: role === 'user' ? 'participant' : 'model',
  turnId: null,
  createdAt: new Date(seq * 1000),
});

describe('HistoryCache', () => {
  it('extends a history with what a turn appended right after it, system notes counted but left out', () => {
    const cache = new HistoryCache({ window: 3 });
    cache.remember('c1', 2, [message(1), message(2)]);
    cache.extend('c1', 2, [message(3), message(4, 'a note', 'system'), message(5, 'reply', 'assistant')]);
    expect(cache.get('c1')).toMatchObject({
      through: 5,
      messages: [message(2), message(3), message(5, 'reply', 'assistant')],
    });
  });

  it('drops a history that a turn did not extend exactly: another seq, a gap, or none known', () => {
    const cache = new HistoryCache({ window: 50 });
    cache.remember('c1', 2, [message(1), message(2)]);
    cache.extend('c1', 1, [message(2)]);
    expect(cache.get('c1')).toBeUndefined();

    cache.remember('c1', 2, [message(1), message(2)]);
    cache.extend('c1', 2, [message(4)]);
    expect(cache.get('c1')).toBeUndefined();

    cache.extend('c1', 4, [message(5)]);
    expect(cache.get('c1')).toBeUndefined();
  });

  it('keeps the conversations used last within its bounds, by count and by characters', () => {
    const cache = new HistoryCache({ window: 50, maxConversations: 2, maxChars: 10 });
    cache.remember('a', 1, [message(1, 'aaaa')]);
    cache.remember('b', 1, [message(1, 'bbbb')]);
    cache.get('a');
    cache.remember('c', 1, [message(1, 'cc')]);
    expect([cache.get('a'), cache.get('b'), cache.get('c')].map(Boolean)).toEqual([true, false, true]);

    cache.remember('d', 1, [message(1, 'dddddd')]); // 4 + 2 + 6 characters: 'a' (used longest ago) goes
    expect([cache.get('a'), cache.get('c'), cache.get('d')].map(Boolean)).toEqual([false, true, true]);
    cache.remember('e', 1, [message(1, 'x'.repeat(11))]); // larger than the whole budget: not kept
    expect(cache.get('e')).toBeUndefined();
  });

  it('hands out a history nobody can change', () => {
    const cache = new HistoryCache({ window: 50 });
    cache.remember('c1', 1, [message(1)]);
    expect(() => (cache.get('c1')!.messages as Message[]).push(message(2))).toThrow(TypeError);
  });
});
