// Many rounds of one run → one figure: medians, spreads and per-round ratios.

/** A workload's JSON report (its shape depends on the workload). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- read back from a child's JSON line
export type Result = Record<string, any>;

export const median = (values: number[]): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Every numeric leaf replaced by its median over the rounds; other leaves from the first round. */
export function medianResult(rounds: Result[]): Result {
  const first = rounds[0] ?? {};
  const out: Result = {};
  for (const [key, value] of Object.entries(first)) {
    if (typeof value === 'number') out[key] = median(rounds.map((round) => round[key]));
    else if (value && typeof value === 'object' && !Array.isArray(value))
      out[key] = medianResult(rounds.map((round) => round[key] ?? {}));
    else out[key] = value;
  }
  return out;
}

/** A dotted path's value in one result ('latencyMs.p50'). */
export const pick = (result: Result, path: string): number =>
  path.split('.').reduce((value, key) => value?.[key], result as Result | undefined) as unknown as number;

/** Lowest and highest of a figure over the rounds. */
export function spread(rounds: Array<Result | null>, path: string): { min: number; max: number } {
  const values = rounds.map((round) => (round ? pick(round, path) : Number.NaN)).filter(Number.isFinite);
  return { min: Math.min(...values), max: Math.max(...values) };
}

/**
 * The median over rounds of `system / baseline` for one figure, each round's pair taken from the
 * same round (run close together in time, so shared load hits both alike). Failed rounds are null.
 */
export function roundRatio(system: Array<Result | null>, baseline: Array<Result | null>, path: string): number {
  // A round either side failed: NaN, left out by median().
  return median(system.map((round, index) => pick(round ?? {}, path) / pick(baseline[index] ?? {}, path)));
}
