import { z } from 'zod';
import type { LlmToolSpec } from '../llm/llm-provider.ts';

/** What a tool hands back to the model: the text it reads, and whether the call failed. */
export interface ToolOutcome {
  status: 'ok' | 'error';
  result: string;
}

export interface ToolExecution {
  signal: AbortSignal;
}

/**
 * A tool the model may call. Arguments are validated with `input` before `execute` runs;
 * `execute` returns the text the model reads (a string means success) or an explicit outcome.
 */
export interface ToolDefinition<Input = unknown> {
  name: string;
  description: string;
  input: z.ZodType<Input>;
  /** The JSON Schema the model sees, when it does not come from `input` (an MCP server's own schema). */
  parameters?: Record<string, unknown>;
  execute(input: Input, execution: ToolExecution): Promise<string | ToolOutcome> | string | ToolOutcome;
  /** A call waits for a person's yes before it runs (decision 022): a tool that changes things. */
  needsApproval?: boolean;
  /**
   * What a call would do, as the person approves it ("delete your note "buy milk""): no ids, no
   * JSON. Null when it would change nothing (an unknown id): it runs at once and says why.
   */
  describeCall?(input: Input): string | null;
}

/** A tool of any input type, as lists of tools hold them (the input is checked at run time). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any>;

export function defineTool<Schema extends z.ZodType>(tool: {
  name: string;
  description: string;
  input: Schema;
  execute: ToolDefinition<z.output<Schema>>['execute'];
  describeCall?: ToolDefinition<z.output<Schema>>['describeCall'];
}): ToolDefinition<z.output<Schema>> {
  // zod cannot prove a generic Schema is a ZodType of its own output; it always is.
  return tool as unknown as ToolDefinition<z.output<Schema>>;
}

/** Generated once per schema: tools are rebuilt every turn (closures over its state), their schemas are not. */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

/** The JSON-schema description the model sees, generated from the same zod schema that validates. */
export function toolSpec(tool: AnyTool): LlmToolSpec {
  if (tool.parameters) return { name: tool.name, description: tool.description, parameters: tool.parameters };
  let schema = jsonSchemas.get(tool.input);
  if (!schema) {
    schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete schema.$schema;
    jsonSchemas.set(tool.input, schema);
  }
  return { name: tool.name, description: tool.description, parameters: schema };
}

export function toolError(message: string): ToolOutcome {
  return { status: 'error', result: `Error: ${message}` };
}

/** Names each problem by its argument path, in words a model can act on. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'arguments'}: ${issue.message}`)
    .join('; ');
}
