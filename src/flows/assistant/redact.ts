/**
 * Redaction of a person's text before any model call, log line or memory write (spec 003,
 * "Redact"). Each kind is replaced by a bracketed label the model can still reason about
 * ("my e-mail is [email]"); the counts say what was removed without saying what it was.
 */

/** Characters (code points) kept of a message. */
export const MAX_INPUT_CHARACTERS = 8000;

export type RedactionKind = 'email' | 'jwt' | 'api-token' | 'secret' | 'card' | 'hex' | 'one-time-code';

export interface Redacted {
  text: string;
  /** How many of each kind were replaced (kinds with none are absent). */
  counts: Partial<Record<RedactionKind, number>>;
  /** The input was longer than `MAX_INPUT_CHARACTERS` and was cut (a note says so in `text`). */
  truncated: boolean;
}

interface Rule {
  kind: RedactionKind;
  pattern: RegExp;
  /** The replacement, or null to keep the match (it only looked like this kind). */
  replace: (match: string, ...groups: string[]) => string | null;
}

const label = (kind: RedactionKind) => () => `[${kind}]`;
/** Keeps the first `count` groups (a name, a separator) and labels what follows them. */
const labelAfter =
  (kind: RedactionKind, count: number) =>
  (_match: string, ...groups: string[]) =>
    `${groups.slice(0, count).join('')}[${kind}]`;
const PASSWORD_WORDS = 'password|passwd|pwd|passphrase';
/** Known API token shapes (OpenAI, Anthropic, Stripe, GitHub, Slack, AWS, Google, GitLab). */
const API_TOKEN_SHAPES = [
  String.raw`sk-(?:proj-|ant-)?[\w-]{16,}`,
  String.raw`(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}`,
  String.raw`gh[pousr]_[A-Za-z0-9]{20,}`,
  String.raw`github_pat_\w{20,}`,
  String.raw`xox[abprs]-[\w-]{10,}`,
  String.raw`AKIA[0-9A-Z]{16}`,
  String.raw`AIza[\w-]{30,}`,
  String.raw`glpat-[\w-]{20,}`,
].join('|');

/**
 * Order matters: specific shapes (a JWT, `password=`) before the general ones that would eat
 * them. Every pattern starts where a run of word characters starts (a lookbehind), so a long run
 * costs linear time, never quadratic.
 */
const RULES: readonly Rule[] = [
  { kind: 'jwt', pattern: /(?<!\w)eyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]{5,}/g, replace: label('jwt') },
  {
    kind: 'secret',
    // Also prefixed and quoted names: DB_PASSWORD=, GITHUB_TOKEN=, "api_key": "…".
    pattern: new RegExp(
      `(?<![\\w-])((?:[A-Za-z0-9]+[_-])*(?:${PASSWORD_WORDS}|secret|api[_-]?key|` +
        `(?:access|secret|private)[_-]?key|token))(["']?\\s*[:=]\\s*)("[^"]*"|'[^']*'|\\S+)`,
      'gi',
    ),
    replace: labelAfter('secret', 2),
  },
  {
    kind: 'secret',
    // "my password is hunter2" (but "the password is required" says nothing secret).
    pattern: new RegExp(
      `(?<![\\w-])(${PASSWORD_WORDS})(\\s+(?:is|was)\\s*:?\\s+)` +
        `(?!(?:required|incorrect|wrong|invalid|missing|expired|correct|too|not|the|a|an|my|your)\\b)` +
        `("[^"]*"|'[^']*'|\\S+)`,
      'gi',
    ),
    replace: labelAfter('secret', 2),
  },
  {
    kind: 'api-token',
    pattern: new RegExp(String.raw`(?<![\w-])(?:${API_TOKEN_SHAPES})`, 'g'),
    replace: label('api-token'),
  },
  // An Authorization header's credentials, whatever the scheme; a bare "Bearer <long token>".
  {
    kind: 'api-token',
    pattern: /\b(Authorization:\s*(?:Basic|Bearer|Token|Digest)?\s*)[\w.~+/=:-]{8,}/gi,
    replace: labelAfter('api-token', 1),
  },
  { kind: 'api-token', pattern: /\b(Bearer\s+)[\w.~+/-]{16,}=*/gi, replace: labelAfter('api-token', 1) },
  { kind: 'api-token', pattern: /\bhttps:\/\/hooks\.slack\.com\/\S+/gi, replace: label('api-token') },
  { kind: 'api-token', pattern: /([?&]sig=)[\w%+/=-]{16,}/gi, replace: labelAfter('api-token', 1) },
  { kind: 'email', pattern: /(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g, replace: label('email') },
  { kind: 'hex', pattern: /(?<!\w)(?:0x)?[0-9a-fA-F]{32,}(?!\w)/g, replace: label('hex') },
  {
    kind: 'card',
    // 13 to 19 digits in one run or in the groups cards are printed in (4-4-4-…, Amex 4-6-5),
    // and only when the Luhn check passes: phone numbers, dates and order numbers are left alone,
    // and so are digits inside a word (an id such as note_01a4111111111111111f7 is not a card).
    pattern:
      /(?<![\w+-]|\d\.)(?:[1-9]\d{12,18}|\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}|\d{4}([ -])\d{6}\2\d{4,5})(?![\w-]|\.\d)/g,
    replace: (match) => (luhn(match.replace(/\D/g, '')) ? '[card]' : null),
  },
  {
    kind: 'one-time-code',
    // A strong cue may stand right before the code; a bare "code" or "pin" needs an "is" or a
    // colon (and a zip or postal code is not one).
    pattern: new RegExp(
      String.raw`\b(otp|passcode|2fa|PIN|one[- ]time (?:code|password)|` +
        String.raw`(?:verification|security|login|confirmation|auth) code|` +
        String.raw`(?<!(?:zip|postal|area|country) )(?:code|pin)(?=\s*(?:is|was|:|=)))` +
        String.raw`\b(\s*(?:is|was|:|=)?\s*)(\d{4,8})(?![\d-])`,
      'gi',
    ),
    replace: labelAfter('one-time-code', 2),
  },
  {
    kind: 'one-time-code',
    pattern: /\b\d{4,8}\b(?=\s+is\s+your\s+(?:[\w-]+\s+){0,2}(?:code|otp|pin|passcode|password)\b)/gi,
    replace: label('one-time-code'),
  },
];

/** The Luhn checksum every payment card number satisfies. */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Read of the input before the rules run: the cap plus room for a secret that straddles it. */
const READ_CHARACTERS = MAX_INPUT_CHARACTERS + 512;

export function redact(input: string): Redacted {
  const counts: Redacted['counts'] = {};
  // Whitespace collapses first (indented text shrinks), then the cut: bounded work for the rules.
  const head = input.length > READ_CHARACTERS * 16 ? input.slice(0, READ_CHARACTERS * 16) : input;
  const characters = Array.from(head.replace(/\s+/g, ' ').trim());
  const over = characters.length > READ_CHARACTERS || head !== input;
  let text = over ? characters.slice(0, READ_CHARACTERS).join('') : characters.join('');
  for (const rule of RULES) {
    text = text.replace(rule.pattern, (...args: string[]) => {
      const replaced = rule.replace(...(args as [string, ...string[]]));
      if (replaced === null) return args[0]!;
      counts[rule.kind] = (counts[rule.kind] ?? 0) + 1;
      return replaced;
    });
  }
  const kept = Array.from(text);
  const truncated = over || kept.length > MAX_INPUT_CHARACTERS;
  if (truncated) {
    text =
      `${kept.slice(0, MAX_INPUT_CHARACTERS).join('').trimEnd()} [Note: the message was longer than ` +
      `${MAX_INPUT_CHARACTERS.toLocaleString('en-US')} characters and was cut here.]`;
  }
  return { text, counts, truncated };
}
