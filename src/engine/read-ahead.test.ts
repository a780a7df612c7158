import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLease } from './conversation-lease.ts';
import { ReadAhead, type EarlyContext } from './read-ahead.ts';

const lease = (taken: number, lost = false): HeldLease => {
  const controller = new AbortController();
  if (lost) controller.abort();
  return { progress: () => undefined, lost: controller.signal, taken };
};
const early = (): EarlyContext => ({ knownThrough: 3, at: Date.now(), read: Promise.resolve(null) });

afterEach(() => vi.useRealTimers());

describe('ReadAhead', () => {
  it('hands the read to the next work under the same lease, once', () => {
    const reads = new ReadAhead();
    const context = early();
    reads.start('c1', 7, () => context);
    expect(reads.take('c1', lease(7))).toBe(context);
    expect(reads.take('c1', lease(7))).toBeUndefined();
  });

  it('drops a read made under another taking of the lease, or one lost meanwhile', () => {
    const reads = new ReadAhead();
    reads.start('c1', 7, early);
    expect(reads.take('c1', lease(8))).toBeUndefined();
    reads.start('c1', 7, early);
    expect(reads.take('c1', lease(7, true))).toBeUndefined();
    // Dropped, not kept for a later work under the right lease either.
    expect(reads.take('c1', lease(7))).toBeUndefined();
  });

  it('drops a read whose turn did not start within a second', () => {
    vi.useFakeTimers();
    const reads = new ReadAhead();
    reads.start('c1', 7, early);
    reads.start('c2', 7, early);
    vi.advanceTimersByTime(999);
    expect(reads.take('c1', lease(7))).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(reads.take('c2', lease(7))).toBeUndefined();
  });

  it('drops a read when other work on the conversation comes first', () => {
    const reads = new ReadAhead();
    reads.start('c1', 7, early);
    reads.start('c2', 7, early);
    reads.forget('c1');
    expect(reads.take('c1', lease(7))).toBeUndefined();
    expect(reads.take('c2', lease(7))).toBeDefined();
  });

  it('keeps one read per conversation, the latest', () => {
    const reads = new ReadAhead();
    const first = early();
    const second = early();
    reads.start('c1', 7, () => first);
    reads.start('c1', 7, () => second);
    expect(reads.take('c1', lease(7))).toBe(second);
  });
});
