import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate, formatNumber } from './calculator.ts';

const value = (expression: string) => {
  const result = evaluate(expression);
  if (!result.ok) throw new Error(result.error);
  return result.value;
};

describe('calculator', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['2 ^ -1', 0.5],
    ['10 % 4', 2],
    ['1,250 * 12', 15000],
    ['1,234,567 * 2', 2469134],
    ['1,234.5 * 2', 2469],
    ['pow(2,10)', 1024],
    ['max(1,234)', 234],
    ['sqrt(16) + max(2, 5)', 9],
    ['3 × 4 ÷ 2', 6],
    ['1.5e3 / .5', 3000],
  ])('%s = %d', (expression, expected) => {
    expect(value(expression)).toBe(expected);
  });

  it.each([
    ['1 / 0', 'finite'],
    ['2 +', 'ends too early'],
    ['(1 + 2', 'not closed'],
    ['1 2', 'after the end'],
    ['foo(1)', 'unknown name "foo"'],
    ['max(1)', 'takes 2 arguments'],
    ['process.exit(1)', 'unexpected "."'],
    ['exit(1)', 'unknown name "exit"'],
    ['2 $ 3', 'unexpected "$"'],
    ['('.repeat(200) + '1' + ')'.repeat(200), 'nested too deeply'],
  ])('%s is refused clearly', (expression, message) => {
    const result = evaluate(expression);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(message);
  });

  it('agrees with JavaScript on sums and products of integers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.constantFrom('+', '-', '*'), { minLength: 7, maxLength: 7 }),
        (numbers, ops) => {
          const expression = numbers.map((n, i) => (i === 0 ? `(${n})` : `${ops[i - 1]} (${n})`)).join(' ');
          expect(value(expression) + 0).toBe(Function(`return ${expression}`)() + 0);
        },
      ),
    );
  });

  it('formats results without float noise', () => {
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
    expect(formatNumber(15000)).toBe('15000');
  });
});
