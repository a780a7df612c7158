import { describe, expect, it } from 'vitest';
import { canonicalPhone } from './phone.ts';
import { spokenDigits } from './spoken-digits.ts';

describe('spokenDigits', () => {
  it('writes digit words as digits, with oh for zero and double or triple for repeats', () => {
    expect(spokenDigits('four one five, five five five, oh one double oh')).toBe('4155550100');
    expect(spokenDigits('415 triple five 0100')).toBe('4155550100');
    expect(spokenDigits('+1 four one five 555 0100')).toBe('+14155550100');
  });

  it('leaves text that is not a spoken number as it was', () => {
    expect(spokenDigits('(415) 555-0100')).toBe('(415) 555-0100');
    expect(spokenDigits('call me on one of my numbers')).toBe('call me on one of my numbers');
  });

  it('gives the phone reader every way a caller says or types a US number', () => {
    for (const said of [
      '415-555-0100',
      '(415) 555-0100',
      '4155550100',
      '+1 415 555 0100',
      'four one five five five five zero one zero zero',
    ]) {
      expect(canonicalPhone(spokenDigits(said), 'US'), said).toBe('+14155550100');
    }
  });
});
