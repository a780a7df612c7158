import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitText } from './split-text.ts';

const squash = (text: string) => text.replace(/\s+/g, '');

describe('splitText', () => {
  it('leaves a text that fits alone', () => {
    expect(splitText('  Hello there.  ', 20)).toEqual(['Hello there.']);
    expect(splitText('', 20)).toEqual(['']);
  });

  it('cuts between paragraphs before sentences, and between sentences before words', () => {
    const text = 'First paragraph is here.\n\nSecond one. It has two sentences.';
    expect(splitText(text, 40)).toEqual(['First paragraph is here.', 'Second one. It has two sentences.']);
    expect(splitText('One sentence here. Another sentence follows it.', 30)).toEqual([
      'One sentence here.',
      'Another sentence follows it.',
    ]);
    expect(splitText('words words words words words', 12)).toEqual(['words words', 'words words', 'words']);
  });

  it('does not make a tiny first part to honour a strong boundary', () => {
    const [first] = splitText('Hi. This is a long sentence without any other stop in it at all', 30);
    expect(first!.length).toBeGreaterThan(10);
  });

  it('never cuts an emoji (a surrogate pair) in half', () => {
    const parts = splitText('😀'.repeat(10), 5);
    for (const part of parts)
      expect(part).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(parts.join('')).toBe('😀'.repeat(10));
  });

  it('never splits a grapheme: ZWJ families, flags, accents', () => {
    const family = '👨‍👩‍👧‍👦';
    expect(splitText(family.repeat(3), 25)).toEqual([family.repeat(2), family]);
    expect(splitText('🇨🇦🇫🇷🇯🇵', 5)).toEqual(['🇨🇦', '🇫🇷', '🇯🇵']);
    const accented = splitText('cafe\u0301cafe\u0301', 4);
    expect(accented).toEqual(['caf', 'e\u0301ca', 'fe\u0301']);
    for (const part of accented) expect(part).toMatch(/^\P{M}/u);
  });

  it('cuts CJK text after its full stops, which have no space after them', () => {
    expect(splitText('今日は歩きました。明日も歩きます。', 12)).toEqual(['今日は歩きました。', '明日も歩きます。']);
  });

  it('cuts a word longer than the limit hard', () => {
    expect(splitText('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
  });

  it('property: every part fits, no part is empty, and no character other than whitespace is lost or added', () => {
    const word = fc.stringMatching(/^[a-z]{1,12}[.!?,]?$/);
    const text = fc
      .array(fc.tuple(word, fc.constantFrom(' ', '  ', '\n', '\n\n')), { maxLength: 80 })
      .map((pairs) => pairs.map(([w, s]) => w + s).join(''));
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 60 }), (input, max) => {
        const parts = splitText(input, max);
        for (const part of parts) expect(part.length).toBeLessThanOrEqual(max);
        if (input.trim()) for (const part of parts) expect(part.length).toBeGreaterThan(0);
        expect(squash(parts.join(''))).toBe(squash(input));
      }),
    );
  });
});
