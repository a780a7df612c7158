/**
 * Narration is plain text. Models sometimes answer with JSON (`{"reply": "..."}`) or a fenced
 * JSON block; that must never reach a participant. Detect it from the first characters. A fenced
 * code sample in another language (an assistant showing a shell command) is text.
 */

const REPLY_FIELDS = ['reply', 'text', 'message', 'response', 'content', 'answer'];

/** Null while the start is still ambiguous (blank, a lone backtick or two, a fence whose language is not known yet). */
export function startsLikeJson(text: string): boolean | null {
  const start = text.trimStart();
  if (start.length === 0) return null;
  if (start[0] === '{' || start[0] === '[') return true;
  if (!start.startsWith('`')) return false;
  if (!'```'.startsWith(start.slice(0, 3))) return false;
  if (start.length < 3) return null;
  return fenceLooksLikeJson(start.slice(3));
}

/** After the opening ```: a `json` tag, or no tag and a body that opens like JSON. */
function fenceLooksLikeJson(afterFence: string): boolean | null {
  const newline = afterFence.indexOf('\n');
  const tag = (newline < 0 ? afterFence : afterFence.slice(0, newline)).trim().toLowerCase();
  if (newline < 0) return 'json'.startsWith(tag) ? null : false;
  if (tag === 'json') return true;
  if (tag !== '') return false;
  const body = afterFence.slice(newline + 1).trimStart();
  return body.length === 0 ? null : body[0] === '{' || body[0] === '[';
}

/** The reply to store and send: the text itself, a reply field pulled out of JSON, or the fallback. */
export function plainReply(text: string, fallback: string): string {
  if (startsLikeJson(text) !== true) return text;
  const body = text
    .trim()
    .replace(/^```[a-z]*\s*/i, '')
    .replace(/```$/, '')
    .trim();
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const field of REPLY_FIELDS) {
        const value = (parsed as Record<string, unknown>)[field];
        if (typeof value === 'string' && value.trim() && startsLikeJson(value) === false) return value.trim();
      }
    }
  } catch {
    // Not JSON after all (a fenced code sample, a list in brackets): fall through.
  }
  return fallback;
}

/**
 * Holds back the first characters of one model stream until it is clear whether they are
 * narration (then everything is released, in order) or JSON (then nothing is).
 */
export class JsonGuard {
  #held = '';
  #mode: 'deciding' | 'text' | 'json' = 'deciding';

  /** The text to pass on now ('' when held back or suppressed). */
  push(delta: string): string {
    if (this.#mode === 'text') return delta;
    if (this.#mode === 'json') return '';
    this.#held += delta;
    const json = startsLikeJson(this.#held);
    if (json === null) return '';
    this.#mode = json ? 'json' : 'text';
    const released = json ? '' : this.#held;
    this.#held = '';
    return released;
  }

  get suppressed(): boolean {
    return this.#mode === 'json';
  }
}
