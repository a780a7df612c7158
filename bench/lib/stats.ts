/** Percentiles and a figure summary, the same for every workload. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarize(samples: number[]): { count: number; p50: number; p99: number; max: number; mean: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length);
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? Number.NaN),
    mean: round(mean),
  };
}

export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Peak RSS of this process so far, in MiB. */
export const peakRssMiB = () => round(process.resourceUsage().maxRSS / 1024, 1);

/** Prints the workload's result as the last stdout line, for the orchestrator. */
export function report(result: Record<string, unknown>): void {
  process.stdout.write(`\n${JSON.stringify({ ...result, peakRssMiB: peakRssMiB() })}\n`);
}

/** `--name value` flags with numeric or string defaults; flags not named in `defaults` are left to other readers. */
export function flags<T extends Record<string, string | number>>(defaults: T): T {
  const out: Record<string, string | number> = { ...defaults };
  const argv = process.argv.slice(2);
  for (let index = 0; index < argv.length; index += 2) {
    const key = argv[index]!.replace(/^--/, '');
    const value = argv[index + 1] ?? '';
    if (!(key in defaults)) continue;
    out[key] = typeof defaults[key] === 'number' ? Number(value) : value;
  }
  return out as T;
}
