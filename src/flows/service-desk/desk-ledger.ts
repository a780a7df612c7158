import { CrmError, type Crm } from './crm.ts';
import { describeError } from '../../core/errors.ts';
import type { FlowRunContext } from '../../engine/flow.ts';
import type { ExecutedToolCall, ToolLoopResult } from '../../engine/tool-loop.ts';
import type { LlmProvider, LlmToolCall } from '../../llm/llm-provider.ts';
import type { Dialog } from './dialog.ts';
import type { DeskTool } from './desk-tools.ts';

/**
 * Carries out a confirmed change: `work` runs against the CRM inside one store transaction that
 * also saves the dialog it returns and the change's audit entry (decision 005). A turn that dies
 * afterwards leaves a dialog that matches the CRM, and the change in the audit.
 */
export type CommitChange = <T>(
  work: (crm: Crm) => Promise<{ value: T; dialog: Dialog; audit: ExecutedToolCall }>,
) => Promise<T>;

/** Model and tool calls of the turn, recorded as the engine's audit expects (proposals and gate decisions too). */
export class Ledger {
  readonly #context: FlowRunContext;
  readonly #calls: ExecutedToolCall[] = [];
  #modelCalls = 0;
  #modelMs = 0;
  #toolMs = 0;
  #model = '';
  #sequence = 0;

  constructor(context: FlowRunContext) {
    this.#context = context;
    this.#model = context.provider.model;
  }

  async model<T extends { model: string }>(call: () => Promise<T>, narrating = false): Promise<T> {
    if (narrating) this.#context.onModelCall?.();
    const started = this.#context.elapsed();
    try {
      const response = await call();
      this.#model = response.model;
      return response;
    } finally {
      this.#modelCalls += 1;
      this.#modelMs += this.#context.elapsed() - started;
    }
  }

  /**
   * Runs a tool with status events and an audit record; its output is checked against the tool's
   * schema. Undefined when it failed.
   */
  async tool(tool: DeskTool, input: unknown, run: () => Promise<unknown>): Promise<unknown> {
    const call = this.#start(tool, input);
    const started = this.#context.elapsed();
    try {
      const output: unknown = tool.output.parse(await run());
      this.#record(this.#entry(call, started, { status: 'ok', result: JSON.stringify(output) }));
      return output;
    } catch (error) {
      this.#record(this.#entry(call, started, failure(error)));
      return undefined;
    }
  }

  /**
   * Runs a side effect through `commit` (see `CommitChange`): `work` makes the change and says the
   * dialog past it. `refused`, with the CRM's code, when the CRM refused (nothing changed, nothing
   * saved); any other failure is thrown, since only the stored dialog can then say whether the
   * change happened.
   */
  async change(
    tool: DeskTool,
    input: unknown,
    commit: CommitChange,
    work: (crm: Crm) => Promise<{ output: unknown; dialog: Dialog }>,
  ): Promise<{ status: 'done'; output: unknown; dialog: Dialog } | { status: 'refused'; code: CrmError['code'] }> {
    const call = this.#start(tool, input);
    const started = this.#context.elapsed();
    try {
      const settled = await commit(async (crm) => {
        const { output, dialog } = await work(crm);
        const parsed: unknown = tool.output.parse(output);
        const audit = {
          ...this.#entry(call, started, { status: 'ok', result: JSON.stringify(parsed) }),
          persisted: true,
        };
        return { value: { output: parsed, dialog, audit }, dialog, audit };
      });
      this.#record(settled.audit);
      return { status: 'done', output: settled.output, dialog: settled.dialog };
    } catch (error) {
      this.#record(this.#entry(call, started, failure(error)));
      if (error instanceof CrmError) return { status: 'refused', code: error.code };
      throw error;
    }
  }

  /** The provider, with every call it makes counted and timed in this ledger (not narrated). */
  observing(provider: LlmProvider): LlmProvider {
    return {
      name: provider.name,
      model: provider.model,
      complete: (request, options) => this.model(() => provider.complete(request, options)),
    };
  }

  audit(name: string, details: unknown): void {
    const entry = {
      round: 0,
      call: { id: `desk_${++this.#sequence}`, name, arguments: JSON.stringify(details) },
      outcome: { status: 'ok' as const, result: 'recorded' },
      startedAt: this.#context.elapsed(),
      durationMs: 0,
    };
    this.#calls.push(entry);
    this.#context.onAudit?.(entry);
  }

  result(text: string): ToolLoopResult {
    return {
      text,
      endedBy: 'reply',
      toolCalls: this.#calls,
      modelCalls: this.#modelCalls,
      toolRounds: this.#calls.length > 0 ? 1 : 0,
      modelMs: this.#modelMs,
      toolMs: this.#toolMs,
      model: this.#model,
    };
  }

  #start(tool: DeskTool, input: unknown): LlmToolCall {
    const call = { id: `desk_${++this.#sequence}`, name: tool.name, arguments: JSON.stringify(input) };
    this.#context.onToolStart?.(call);
    return call;
  }

  #entry(call: LlmToolCall, started: number, outcome: ExecutedToolCall['outcome']): ExecutedToolCall {
    return { round: 1, call, outcome, startedAt: started, durationMs: this.#context.elapsed() - started };
  }

  #record(executed: ExecutedToolCall): void {
    this.#toolMs += executed.durationMs;
    this.#calls.push(executed);
    this.#context.onToolCall?.(executed);
  }
}

const failure = (error: unknown): ExecutedToolCall['outcome'] => ({
  status: 'error',
  result: `Error: ${error instanceof CrmError ? error.message : describeError(error)}`,
});
