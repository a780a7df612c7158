import { describe, expect, it } from 'vitest';
import { contextBlock } from './assistant-prompts.ts';

describe('the context block', () => {
  it("gives the time in the person's zone when it is known, else in UTC", () => {
    const now = new Date('2026-11-23T10:07:00Z');
    expect(contextBlock(now, 'Toronto', 'America/Toronto')).toBe(
      'Current context:\n• Time: Monday, November 23, 2026 at 05:07 (America/Toronto)\n• Location: Toronto',
    );
    expect(contextBlock(now, 'Unknown')).toBe(
      'Current context:\n• Time: Monday, November 23, 2026 at 10:07 UTC\n• Location: Unknown',
    );
  });
});
