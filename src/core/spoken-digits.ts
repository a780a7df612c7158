/** Digit words as callers say them and speech-to-text writes them. */
const DIGITS: Record<string, string> = {
  zero: '0',
  oh: '0',
  o: '0',
  nought: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
};
const REPEATS: Record<string, number> = { double: 2, triple: 3 };

/**
 * A phone number as said ("four one five, five five five, oh one double oh") with its digit words
 * written as digits ("4155550100"); text without digit words comes back as it was.
 */
export function spokenDigits(text: string): string {
  const words = text
    .toLowerCase()
    .split(/[\s,.;:-]+/)
    .filter(Boolean);
  if (!words.some((word) => word in DIGITS)) return text;
  let digits = '';
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    const times = REPEATS[word];
    const next = words[index + 1];
    if (times && next !== undefined && (next in DIGITS || /^\d$/.test(next))) {
      digits += (DIGITS[next] ?? next).repeat(times);
      index += 1;
    } else if (word in DIGITS) digits += DIGITS[word];
    else if (/^\+?[\d()]+$/.test(word)) digits += word.replace(/[()]/g, '');
    else return text; // words that are not a number: leave the text for the phone reader to refuse
  }
  return digits;
}
