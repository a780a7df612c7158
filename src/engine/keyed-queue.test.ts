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

  it('reports idle but for the keys it is told to ignore, and looks again when told their answer changed', async () => {
    const queue = new KeyedQueue();
    const gates = new Map<string, () => void>();
    const held = (key: string) => queue.run(key, () => new Promise<void>((resolve) => gates.set(key, resolve)));
    const runs = [held('a'), held('a'), held('b')];
    const ignored = new Set<string>();
    let idle = false;
    void queue.idle((key) => ignored.has(key)).then(() => (idle = true));
    await tick(0);
    expect(idle).toBe(false);
    ignored.add('a');
    queue.recheck();
    await tick(0);
    expect(idle).toBe(false); // b still runs
    gates.get('b')!();
    await tick(0);
    expect(idle).toBe(true); // a's two tasks are left, both under an ignored key
    expect(queue.size).toBe(2);
    gates.get('a')!();
    await tick(0);
    gates.get('a')!();
    await Promise.all(runs);
    await queue.idle();
  });
});
