import type { LlmToolCall } from '../../llm/llm-provider.ts';
import { toolError, type ToolOutcome } from '../../tools/define-tool.ts';
import { parseArguments } from '../../tools/execute-tool-call.ts';

export interface CallGuardOptions {
  /** Names the model may call this reply (the profile's allowlist plus MCP tools). */
  allowed: readonly string[];
  /** How many earlier successful calls a new one is compared with (spec 003: the last few). */
  duplicateWindow?: number;
  /** Successful runs of one tool per reply (and twice as many failed ones); more are refused. */
  perToolCap?: number;
}

/** What to do with one proposed call: run it, or answer the model without running anything. */
export type GuardVerdict =
  { run: true } | { run: false; outcome: ToolOutcome; reason: 'not-allowed' | 'duplicate' | 'repeated-too-often' };

/**
 * The agentic loop's guard rails (spec 003, "Duplicate suppression"): a tool outside the
 * allowlist never runs; a call identical (same name, same arguments with keys in any order) to
 * one of the last few successful calls is answered with "reuse the earlier result"; one tool
 * may run only so many times per reply. Pure bookkeeping: the loop executes.
 */
export class CallGuard {
  readonly #allowed: ReadonlySet<string>;
  readonly #window: number;
  readonly #cap: number;
  readonly #recent: Array<{ key: string; result: string }> = [];
  /** Successful runs per tool in this reply, this response's included. */
  readonly #runs = new Map<string, number>();
  /** Failed runs per tool: a model fixing its arguments gets more tries than the cap, but not endless ones. */
  readonly #failures = new Map<string, number>();

  constructor(options: CallGuardOptions) {
    this.#allowed = new Set(options.allowed);
    this.#window = options.duplicateWindow ?? 5;
    this.#cap = options.perToolCap ?? 3;
  }

  check(call: LlmToolCall): GuardVerdict {
    if (!this.#allowed.has(call.name)) {
      const available = [...this.#allowed].join(', ') || 'none';
      return {
        run: false,
        reason: 'not-allowed',
        outcome: toolError(`the tool "${call.name}" is not available here. Available tools: ${available}.`),
      };
    }
    const key = callKey(call);
    const earlier = key === null ? undefined : this.#recent.find((entry) => entry.key === key);
    if (earlier) {
      return {
        run: false,
        reason: 'duplicate',
        outcome: {
          status: 'ok',
          result: `Not run again: this exact call was already made. Reuse its result:\n${earlier.result}`,
        },
      };
    }
    if ((this.#runs.get(call.name) ?? 0) >= this.#cap || (this.#failures.get(call.name) ?? 0) >= this.#cap * 2) {
      return {
        run: false,
        reason: 'repeated-too-often',
        outcome: toolError(
          `${call.name} already ran ${this.#cap} times for this request; answer with the results you have.`,
        ),
      };
    }
    return { run: true };
  }

  /** Records a call that ran: a successful one counts towards its tool's cap and suppresses later identical calls. */
  ran(call: LlmToolCall, outcome: ToolOutcome): void {
    const counts = outcome.status === 'ok' ? this.#runs : this.#failures;
    counts.set(call.name, (counts.get(call.name) ?? 0) + 1);
    const key = callKey(call);
    if (outcome.status !== 'ok' || key === null) return;
    this.#recent.push({ key, result: outcome.result });
    if (this.#recent.length > this.#window) this.#recent.shift();
  }
}

/** Name plus arguments with object keys sorted at every depth; null when the arguments do not parse. */
export function callKey(call: LlmToolCall): string | null {
  const parsed = parseArguments(call.arguments);
  return parsed.ok ? `${call.name}:${JSON.stringify(sortKeys(parsed.value))}` : null;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
