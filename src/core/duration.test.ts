import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.ts';

describe('parseDuration', () => {
  it.each([
    ['5h', 18_000_000],
    ['15m', 900_000],
    ['30s', 30_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['0.5m', 30_000],
    ['500ms', 500],
    ['0', 0],
  ])('reads %s', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['', '5', 'h', '5 hours', '-5m', '5h junk', '1x'])('rejects %j', (text) =>
    expect(parseDuration(text)).toBeNull(),
  );
});
