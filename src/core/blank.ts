/**
 * Whitespace, and the invisible characters JavaScript's `trim()` keeps (zero-width spaces and joiners, word joiner,
 * BOM).
 */
const INVISIBLE = /^[\s\u200B-\u200D\u2060\uFEFF]*$/u;

/** True when a text shows nothing at all: such a message has nothing to answer. */
export function isBlank(text: string): boolean {
  return INVISIBLE.test(text);
}
