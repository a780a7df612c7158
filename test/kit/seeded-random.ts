/**
 * A repeatable random source for tests (mulberry32): the same seed gives the same delays and
 * choices, so a failure can be replayed. `TEST_SEED` picks another seed.
 */
export function seededRandom(seed = Number(process.env.TEST_SEED ?? 20261124)): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
