/**
 * Splits `text` into parts of at most `max` characters for channels with a length limit,
 * preferring to cut between paragraphs, then lines, then sentences, then words; a word longer
 * than `max` is cut hard. Parts are trimmed; joining them with a space keeps every word.
 */
export function splitText(text: string, max: number): string[] {
  if (max < 1) throw new RangeError('max must be at least 1');
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const cut = graphemeStart(rest, bestCut(rest, max));
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}

/** Paragraphs, lines, sentences (CJK full stops need no space after them), words. */
const BOUNDARIES = [/\n\s*\n/g, /\n/g, /[.!?…]["')\]]?\s+|[。！？][」』）]?/g, /\s+/g];

/** Where to cut: the end of the last boundary match that fits, trying the strongest kind first. */
function bestCut(text: string, max: number): number {
  const window = text.slice(0, max + 1);
  for (const boundary of BOUNDARIES) {
    let cut = 0;
    for (const match of window.matchAll(boundary)) {
      const contentEnd = match.index + match[0].trimEnd().length;
      // A cut in the first third would make a tiny part; a weaker boundary does better.
      if (contentEnd <= max && contentEnd > max / 3) cut = match.index + match[0].length;
    }
    if (cut > 0) return cut;
  }
  return max;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The cut moved back to the start of the grapheme it falls in, so no character is split (an
 * emoji's surrogate pair, a ZWJ family, a flag, a letter and its accent). A first grapheme
 * longer than the whole part is cut between code points instead.
 */
function graphemeStart(text: string, cut: number): number {
  for (const { index, segment } of graphemes.segment(text)) {
    if (index + segment.length <= cut) continue;
    if (index > 0) return index;
    const high = text.charCodeAt(cut - 1);
    return high >= 0xd800 && high <= 0xdbff && cut > 1 ? cut - 1 : cut;
  }
  return cut;
}
