const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Milliseconds of a duration written as `5h`, `15m`, `30s`, `1d`, `1h30m`, `0.5m`, `500ms` or a
 * bare `0`; null when it is not one.
 */
export function parseDuration(text: string): number | null {
  const value = text.trim();
  if (value === '0') return 0;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== value) return null;
  return Math.round(parts.reduce((total, part) => total + Number(part[1]) * UNITS[part[2]!]!, 0));
}
