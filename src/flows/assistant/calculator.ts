/**
 * Arithmetic for the calculator tool: a small recursive-descent parser (never `eval`).
 * Grammar: sum := product (('+'|'-') product)*; product := unary (('*'|'/'|'%') unary)*;
 * unary := '-' unary | '+' unary | power; power := atom ('^' unary)?  (so -2^2 = -4, 2^3^2 = 512);
 * atom := number | '(' sum ')' | name '(' sum (',' sum)* ')' | constant.
 */

export type Evaluation = { ok: true; value: number } | { ok: false; error: string };

const FUNCTIONS: Record<string, { arity: number; apply: (...args: number[]) => number }> = {
  sqrt: { arity: 1, apply: Math.sqrt },
  abs: { arity: 1, apply: Math.abs },
  round: { arity: 1, apply: Math.round },
  floor: { arity: 1, apply: Math.floor },
  ceil: { arity: 1, apply: Math.ceil },
  ln: { arity: 1, apply: Math.log },
  log10: { arity: 1, apply: Math.log10 },
  sin: { arity: 1, apply: Math.sin },
  cos: { arity: 1, apply: Math.cos },
  tan: { arity: 1, apply: Math.tan },
  min: { arity: 2, apply: Math.min },
  max: { arity: 2, apply: Math.max },
  pow: { arity: 2, apply: Math.pow },
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };
const MAX_LENGTH = 500;

class ParseError extends Error {}

/**
 * "1,234,567 * 2" means 1234567 * 2; but in an expression with a function call the comma
 * separates arguments ("max(1,234)"), so it is left alone there.
 */
function withoutThousandsSeparators(expression: string): string {
  if (/[a-z]\s*\(/i.test(expression)) return expression;
  return expression.replace(/(?<![\d.])\d{1,3}(?:,\d{3})+(?!\d|,\d)/g, (group) => group.replaceAll(',', ''));
}

export function evaluate(expression: string): Evaluation {
  if (expression.length > MAX_LENGTH)
    return { ok: false, error: `the expression is longer than ${MAX_LENGTH} characters` };
  const tokens = tokenize(withoutThousandsSeparators(expression));
  if (!tokens.ok) return tokens;
  const parser = new Parser(tokens.value);
  try {
    const value = parser.sum();
    parser.expectEnd();
    if (!Number.isFinite(value)) return { ok: false, error: 'the result is not a finite number (division by zero?)' };
    return { ok: true, value };
  } catch (error) {
    if (error instanceof ParseError) return { ok: false, error: error.message };
    throw error;
  }
}

/** A result as people write it: at most 12 significant digits, no float noise. */
export function formatNumber(value: number): string {
  return String(Number.parseFloat(value.toPrecision(12)));
}

type Token = { kind: 'number'; value: number } | { kind: 'name'; value: string } | { kind: 'symbol'; value: string };

function tokenize(text: string): { ok: true; value: Token[] } | { ok: false; error: string } {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+)|([a-z_][a-z0-9_]*)|([-+*/%^(),×÷]))/giy;
  let index = 0;
  while (index < text.length) {
    pattern.lastIndex = index;
    const match = pattern.exec(text);
    if (!match) {
      if (text.slice(index).trim() === '') break;
      return { ok: false, error: `unexpected "${text.slice(index).trim()[0]}" at position ${index + 1}` };
    }
    index = pattern.lastIndex;
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: Number(match[1]) });
    else if (match[2] !== undefined) tokens.push({ kind: 'name', value: match[2].toLowerCase() });
    else tokens.push({ kind: 'symbol', value: match[3] === '×' ? '*' : match[3] === '÷' ? '/' : match[3]! });
  }
  return { ok: true, value: tokens };
}

class Parser {
  #tokens: Token[];
  #position = 0;
  #depth = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  sum(): number {
    let value = this.product();
    for (let op = this.#symbol('+', '-'); op; op = this.#symbol('+', '-'))
      value = op === '+' ? value + this.product() : value - this.product();
    return value;
  }

  product(): number {
    let value = this.unary();
    for (let op = this.#symbol('*', '/', '%'); op; op = this.#symbol('*', '/', '%')) {
      const right = this.unary();
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  }

  unary(): number {
    if (this.#symbol('-')) return -this.unary();
    if (this.#symbol('+')) return this.unary();
    return this.power();
  }

  power(): number {
    const base = this.atom();
    return this.#symbol('^') ? base ** this.unary() : base;
  }

  atom(): number {
    if (++this.#depth > 100) throw new ParseError('the expression is nested too deeply');
    try {
      const token = this.#tokens[this.#position++];
      if (!token) throw new ParseError('the expression ends too early');
      if (token.kind === 'number') return token.value;
      if (token.kind === 'symbol' && token.value === '(') return this.#closed(this.sum());
      if (token.kind === 'name') return this.#named(token.value);
      throw new ParseError(`unexpected "${token.value}"`);
    } finally {
      this.#depth -= 1;
    }
  }

  expectEnd(): void {
    const token = this.#tokens[this.#position];
    if (token) throw new ParseError(`unexpected "${token.value}" after the end of the expression`);
  }

  #named(name: string): number {
    const fn = FUNCTIONS[name];
    if (!fn) {
      if (name in CONSTANTS) return CONSTANTS[name]!;
      throw new ParseError(
        `unknown name "${name}" (functions: ${Object.keys(FUNCTIONS).join(', ')}; constants: pi, e)`,
      );
    }
    if (!this.#symbol('(')) throw new ParseError(`${name} needs parentheses: ${name}(…)`);
    const args = [this.sum()];
    while (this.#symbol(',')) args.push(this.sum());
    this.#closed(0);
    if (args.length !== fn.arity)
      throw new ParseError(`${name} takes ${fn.arity} argument${fn.arity === 1 ? '' : 's'}`);
    return fn.apply(...args);
  }

  #closed<T>(value: T): T {
    if (!this.#symbol(')')) throw new ParseError('a "(" is not closed');
    return value;
  }

  #symbol(...symbols: string[]): string | null {
    const token = this.#tokens[this.#position];
    if (token?.kind === 'symbol' && symbols.includes(token.value)) {
      this.#position += 1;
      return token.value;
    }
    return null;
  }
}
