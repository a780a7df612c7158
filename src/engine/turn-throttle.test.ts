import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../timers/virtual-clock.ts';
import { SlidingWindowThrottle } from './turn-throttle.ts';

const start = new Date('2026-06-01T12:00:00Z');
const at = (ms: number) => new Date(start.getTime() + ms);
const never = new AbortController().signal;

describe('SlidingWindowThrottle', () => {
  it('gives `limit` turns per window at once, then waits until the oldest leaves the window', async () => {
    const clock = new VirtualClock(start);
    const throttle = new SlidingWindowThrottle({ limit: 2, windowMs: 1000, clock });
    expect(await throttle.take('c1', never)).toBe('free');
    clock.set(at(400));
    expect(await throttle.take('c1', never)).toBe('free');
    // Another conversation has its own budget.
    expect(await throttle.take('c2', never)).toBe('free');

    let third: string | undefined;
    const waiting = throttle.take('c1', never).then((outcome) => (third = outcome));
    clock.set(at(999));
    await new Promise((resolve) => setImmediate(resolve)); // every microtask: had it woken, it would have said so
    expect(third).toBeUndefined();
    clock.set(at(1000));
    await waiting;
    expect(third).toBe('waited');
    // The window now holds the turns at 400 and 1000: the next waits for 1400.
    const fourth = throttle.take('c1', never);
    clock.set(at(1400));
    expect(await fourth).toBe('waited');
  });

  it('stops waiting when its signal aborts', async () => {
    const clock = new VirtualClock(start);
    const throttle = new SlidingWindowThrottle({ limit: 1, windowMs: 1000, clock });
    await throttle.take('c1', never);
    const stop = new AbortController();
    const waiting = throttle.take('c1', stop.signal);
    stop.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
  });
});
