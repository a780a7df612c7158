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

interface Step {
  value: unknown;
  key: string | number | undefined;
  parent: Step | undefined;
}

/**
 * The path (`a.b.0`) of a string or object key holding U+0000 in a parsed value, if any: walked
 * without recursion (a body may nest thousands deep) and without a path per element (only the
 * one found is spelled out).
 */
export function nulPath(root: unknown): string | undefined {
  const stack: Step[] = [{ value: root, key: undefined, parent: undefined }];
  for (let step = stack.pop(); step; step = stack.pop()) {
    const { value } = step;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return pathOf(step);
      continue;
    }
    if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) continue;
    for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
      const child = { value: item, key, parent: step };
      if (typeof key === 'string' && key.includes(NUL)) return pathOf(child);
      stack.push(child);
    }
  }
  return undefined;
}

function pathOf(step: Step): string {
  const keys: Array<string | number> = [];
  for (let at: Step | undefined = step; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}
