import { flags } from './stats.ts';

/** The "turn" workload's shape, the same for every system. */
export const turnFlags = () => flags({ conversations: 1000, turns: 10, concurrency: 1 });

/**
 * Runs `turns` turns on each of `conversations` conversations, `concurrency` conversations at a
 * time (each conversation's turns in order), timing every turn.
 */
export async function driveTurns(
  opts: { conversations: number; turns: number; concurrency: number },
  turn: (conversation: number, index: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.conversations) {
        const conversation = next++;
        for (let index = 0; index < opts.turns; index++) {
          const t = performance.now();
          await turn(conversation, index);
          latencies.push(performance.now() - t);
        }
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}
