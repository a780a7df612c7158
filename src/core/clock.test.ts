import { afterEach, describe, expect, it, vi } from 'vitest';
import { timeOrderedIds } from './clock.ts';

describe('time-ordered ids', () => {
  afterEach(() => vi.useRealTimers());

  it('are the prefix and 32 hex digits, all different, past many batches of random bytes', () => {
    const ids = timeOrderedIds();
    const made = Array.from({ length: 2000 }, () => ids.next('msg'));
    expect(made.every((id) => /^msg_[0-9a-f]{32}$/.test(id))).toBe(true);
    expect(new Set(made).size).toBe(made.length);
    expect(new Set(made.map((id) => id.slice(16))).size).toBe(made.length); // the random part alone
  });

  it('sort by the millisecond they were made in', () => {
    vi.useFakeTimers({ now: new Date('2026-11-28T12:00:00.000Z'), toFake: ['Date'] });
    const ids = timeOrderedIds();
    const made: string[] = [];
    for (let ms = 0; ms < 50; ms++) {
      made.push(ids.next('in'), ids.next('in'));
      vi.setSystemTime(Date.now() + (ms % 3));
    }
    const byTime = made.map((id) => id.slice(3, 15));
    expect(byTime).toEqual([...byTime].sort());
    expect(made[0]!.slice(3, 15)).toBe(Date.parse('2026-11-28T12:00:00.000Z').toString(16).padStart(12, '0'));
  });
});
