import { startMeter, type Writes } from './meter.ts';
import { flags } from './stats.ts';

/** The "turn" workload's shape, the same for every system. */
export const turnFlags = () => flags({ conversations: 1000, turns: 10, concurrency: 1 });

/** Conversations of the untimed warm-up pass: a tenth more, at indexes after the timed ones. */
export const warmupConversations = (opts: { conversations: number }) => Math.max(2, Math.ceil(opts.conversations / 10));

/** Every conversation a workload must prepare: the timed ones, then the warm-up ones. */
export const allConversations = (opts: { conversations: number }) => opts.conversations + warmupConversations(opts);

type Turn = (conversation: number, index: number) => Promise<void>;

/**
 * Runs an untimed warm-up pass (JIT, caches, pool connections, statement caches), then `turns`
 * turns on each of `conversations` conversations, `concurrency` conversations at a time (each
 * conversation's turns in order), timing every turn and metering the database over the timed pass
 * (with `pgUrl`: PostgreSQL round trips and WAL; otherwise node:sqlite statements and write() bytes).
 */
export async function driveTurns(
  opts: { conversations: number; turns: number; concurrency: number },
  turn: Turn,
  options: { pgUrl?: string; settle?: () => Promise<void> } = {},
): Promise<{ latencies: number[]; seconds: number; writes: Writes }> {
  await pass(opts.conversations, warmupConversations(opts), opts, turn);
  await options.settle?.();
  const metering = await startMeter({ pgUrl: options.pgUrl });
  const started = performance.now();
  const latencies = await pass(0, opts.conversations, opts, turn);
  const seconds = (performance.now() - started) / 1000;
  // Work the turns left behind (an outbox drained after the reply) is counted, not timed.
  await options.settle?.();
  return { latencies, seconds, writes: await metering.stop() };
}

async function pass(
  first: number,
  count: number,
  opts: { turns: number; concurrency: number },
  turn: Turn,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = first;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < first + count) {
        const conversation = next++;
        for (let index = 0; index < opts.turns; index++) {
          const t = performance.now();
          await turn(conversation, index);
          latencies.push(performance.now() - t);
        }
      }
    }),
  );
  return latencies;
}
