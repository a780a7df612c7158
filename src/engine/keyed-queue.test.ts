import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from './keyed-queue.ts';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('KeyedQueue', () => {
  it('runs tasks of one key one at a time, in order, whatever their durations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 3 })), { maxLength: 30 }),
        async (tasks) => {
          const queue = new KeyedQueue();
          const running = new Set<string>();
          const order: Record<string, number[]> = {};
          await Promise.all(
            tasks.map(([key, delay], index) =>
              queue.run(key, async () => {
                expect(running.has(key)).toBe(false);
                running.add(key);
                await tick(delay);
                (order[key] ??= []).push(index);
                running.delete(key);
              }),
            ),
          );
          for (const [key, indexes] of Object.entries(order)) {
            const expected = tasks.flatMap(([k], index) => (k === key ? [index] : []));
            expect(indexes).toEqual(expected);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('runs different keys concurrently', async () => {
    const queue = new KeyedQueue();
    let concurrent = 0;
    let peak = 0;
    const task = async () => {
      concurrent += 1;
      peak = Math.max(peak, concurrent);
      await tick(20);
      concurrent -= 1;
    };
    await Promise.all(['a', 'b', 'c', 'd'].map((key) => queue.run(key, task)));
    expect(peak).toBe(4);
  });

  it('keeps going after a failing task and reports idle', async () => {
    const queue = new KeyedQueue();
    const failed = queue.run('a', async () => {
      throw new Error('boom');
    });
    const next = queue.run('a', async () => 'second');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('second');
    await queue.idle();
    expect(queue.size).toBe(0);
  });
});
