/**
 * U+0000, the one character PostgreSQL's text cannot hold (`invalid byte sequence for encoding
 * "UTF8": 0x00`). An API client sending it is told so (400, the field named); text the server
 * does not choose to refuse (a provider's webhook, a model's reply) has it replaced by U+FFFD, the
 * replacement character, so that the message is kept on either store.
 */
export const NUL = '\u0000';

export function replaceNul(text: string): string {
  return text.includes(NUL) ? text.replaceAll(NUL, '\uFFFD') : text;
}

/** The path (`a.b.0`) of the first string or object key holding U+0000 in a parsed value, if any. */
export function nulPath(value: unknown, path: readonly (string | number)[] = []): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? path.join('.') : undefined;
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return undefined;
  for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const at = [...path, key];
    if (typeof key === 'string' && key.includes(NUL)) return at.join('.');
    const found = nulPath(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}
