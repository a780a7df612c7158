import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ConfigError } from '../../config/config-error.ts';
import { describeError } from '../../core/errors.ts';
import { describeIssues, toolError, type AnyTool, type ToolOutcome } from '../../tools/define-tool.ts';
import type { ExtraToolSource } from './assistant-flow.ts';
import { argumentsInWords } from './approvals.ts';

const serverName = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, - and _ (at most 32)');
/**
 * Which of a server's tools wait for the person's yes (decision 022): `writes` (default) every
 * tool not annotated `readOnlyHint: true`, `always`, `never`, or the listed tool names.
 */
const requireApproval = z
  .union([z.enum(['writes', 'always', 'never']), z.array(z.string().min(1)).max(500)], {
    error: '"writes", "always", "never", or a list of the server\'s tool names',
  })
  .default('writes');
const stdioServer = z.strictObject({
  command: z.string().min(1),
  requireApproval,
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
});
const httpServer = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  requireApproval,
  headers: z.record(z.string(), z.string()).optional(),
});
// Each server is read as the kind its fields say (`url`: HTTP, else stdio), so that a mistake is
// named by its field; a union of the two would only say "invalid input".
const configSchema = z.strictObject({ mcpServers: z.record(serverName, z.record(z.string(), z.unknown())) });

export type McpServerConfig = { name: string } & (z.input<typeof stdioServer> | z.input<typeof httpServer>);

/** Reads `MCP_CONFIG_FILE` (the `mcpServers` shape other MCP clients use); problems stop start-up naming the field. */
export function loadMcpConfig(path: string): McpServerConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError([`MCP_CONFIG_FILE: cannot read ${path} as JSON (${describeError(error)})`]);
  }
  const parsed = configSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError([`MCP_CONFIG_FILE: ${describeIssues(parsed.error)}`]);
  const problems: string[] = [];
  const servers = Object.entries(parsed.data.mcpServers).flatMap(([name, fields]): McpServerConfig[] => {
    const server = ('url' in fields ? httpServer : stdioServer).safeParse(fields);
    if (server.success) return [{ name, ...server.data }];
    for (const issue of server.error.issues)
      problems.push(`MCP_CONFIG_FILE: ${['mcpServers', name, ...issue.path].join('.')}: ${issue.message}`);
    return [];
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return servers;
}

interface Connection {
  config: McpServerConfig;
  client: Client | null;
  tools: AnyTool[];
  /** When a failed server may be tried again (ms since epoch). */
  retryAt: number;
  /** The connection attempt under way: never two at once for one server. */
  connecting: Promise<void> | null;
}

export interface McpToolsOptions {
  servers: McpServerConfig[];
  logger: Logger;
  /** Connect and call timeout, in ms. */
  timeoutMs: number;
  /** Wall time, for reconnect back-off. */
  now?: () => number;
}

const RETRY_MS = 30_000;
/** Longest tool result handed to the model (and the audit). */
export const MAX_RESULT_CHARACTERS = 20_000;
/** Longest tool description: a server's text goes into the prompt, so it is kept short and flat. */
const MAX_DESCRIPTION_CHARACTERS = 500;
const MAX_LIST_PAGES = 20;

/**
 * Tools of the configured MCP servers (stdio and streamable HTTP), named `server__tool`. A
 * server that fails to start or drops contributes no tools and is reconnected in the background
 * at most every 30 s; it never holds up or fails a turn. The tool list follows the servers'
 * `tools/list_changed` notifications.
 */
export class McpTools implements ExtraToolSource {
  readonly #connections: Connection[];
  readonly #options: McpToolsOptions;
  readonly #now: () => number;
  #closed = false;

  constructor(options: McpToolsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#connections = options.servers.map((config) => ({
      config,
      client: null,
      tools: [],
      retryAt: 0,
      connecting: null,
    }));
  }

  /** Connects every server (concurrently); failures are logged and retried later. */
  async start(): Promise<void> {
    await Promise.all(this.#connections.map((connection) => this.#ensure(connection)));
  }

  /** The tools of the servers connected now (names unique); starts reconnects that are due without waiting for them. */
  async tools(): Promise<AnyTool[]> {
    for (const connection of this.#connections) {
      if (!connection.client && this.#now() >= connection.retryAt) void this.#ensure(connection);
    }
    const seen = new Set<string>();
    return this.#connections
      .flatMap((connection) => connection.tools)
      .filter((tool) => !seen.has(tool.name) && seen.add(tool.name));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#connections.map((connection) => connection.connecting));
    await Promise.all(this.#connections.map((connection) => connection.client?.close().catch(() => undefined)));
    for (const connection of this.#connections) Object.assign(connection, { client: null, tools: [] });
  }

  #ensure(connection: Connection): Promise<void> {
    if (this.#closed) return Promise.resolve();
    connection.connecting ??= this.#connect(connection).finally(() => (connection.connecting = null));
    return connection.connecting;
  }

  async #connect(connection: Connection): Promise<void> {
    const { config } = connection;
    const client = new Client(
      { name: 'promptpipe', version: '0.1.0' },
      {
        listChanged: {
          tools: {
            onChanged: (error, tools) =>
              void (
                !error &&
                tools &&
                connection.client === client &&
                (connection.tools = this.#wrapAll(connection, tools))
              ),
          },
        },
      },
    );
    client.onclose = () => this.#lost(connection, client, this.#now() + RETRY_MS);
    try {
      await client.connect(this.#transport(config), { timeout: this.#options.timeoutMs });
      const tools = await this.#listAll(client);
      if (this.#closed) throw new Error('closing');
      Object.assign(connection, { client, tools: this.#wrapAll(connection, tools) });
      this.#options.logger.info({ mcpServer: config.name, tools: tools.map((t) => t.name) }, 'MCP server connected');
    } catch (error) {
      await client.close().catch(() => undefined);
      connection.retryAt = this.#now() + RETRY_MS;
      if (!this.#closed)
        this.#options.logger.warn({ mcpServer: config.name, err: error }, 'MCP server unavailable; retrying later');
    }
  }

  /** The server went away: its tools are gone until a reconnect (at `retryAt`) succeeds. */
  #lost(connection: Connection, client: Client, retryAt: number): void {
    if (connection.client !== client) return;
    this.#options.logger.warn(
      { mcpServer: connection.config.name },
      'MCP server disconnected; its tools are unavailable until it reconnects',
    );
    Object.assign(connection, { client: null, tools: [], retryAt });
    void client.close().catch(() => undefined);
  }

  #transport(config: McpServerConfig) {
    return 'command' in config
      ? new StdioClientTransport({
          command: config.command,
          args: config.args,
          env: { ...getDefaultEnvironment(), ...config.env },
          cwd: config.cwd,
          stderr: 'ignore',
        })
      : new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
  }

  async #listAll(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.#options.timeoutMs });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  #wrapAll(connection: Connection, tools: Tool[]): AnyTool[] {
    return tools.map((tool) => this.#wrap(connection, tool));
  }

  #wrap(connection: Connection, tool: Tool): AnyTool {
    const name = `${connection.config.name}__${tool.name}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
    const description = (tool.description ?? `${tool.name} (MCP server ${connection.config.name})`)
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, MAX_DESCRIPTION_CHARACTERS);
    const server = connection.config.name;
    return {
      name,
      description,
      needsApproval: needsApproval(connection.config.requireApproval, tool),
      describeCall: (args) =>
        `use "${tool.annotations?.title ?? tool.title ?? tool.name}" on ${server}${argumentsInWords(args)}`,
      input: z.record(z.string(), z.unknown()),
      parameters: tool.inputSchema as Record<string, unknown>,
      execute: async (args: Record<string, unknown>, { signal }): Promise<ToolOutcome> => {
        const client = connection.client;
        if (!client) return toolError(`the MCP server ${connection.config.name} is not connected`);
        let result: Awaited<ReturnType<Client['callTool']>>;
        try {
          result = await client.callTool({ name: tool.name, arguments: args }, undefined, {
            signal,
            timeout: this.#options.timeoutMs,
          });
        } catch (error) {
          // Not an answer from the server (which would be an McpError) but a failed transport: an
          // HTTP server that went away never closes the client, so drop it and reconnect at once.
          if (!(error instanceof McpError) && !signal?.aborted) this.#lost(connection, client, this.#now());
          throw error;
        }
        const text = capped(contentText(result.content));
        return result.isError
          ? toolError(text || 'the tool reported an error')
          : { status: 'ok', result: text || '(no output)' };
      },
    };
  }
}

function needsApproval(rule: McpServerConfig['requireApproval'] = 'writes', tool: Tool): boolean {
  if (Array.isArray(rule)) return rule.includes(tool.name);
  if (rule === 'writes') return tool.annotations?.readOnlyHint !== true;
  return rule === 'always';
}

function capped(text: string): string {
  if (text.length <= MAX_RESULT_CHARACTERS) return text;
  const limit = MAX_RESULT_CHARACTERS.toLocaleString('en-US');
  return `${text.slice(0, MAX_RESULT_CHARACTERS)}\n[… output cut at ${limit} characters]`;
}

/** An MCP result's content as text: text parts verbatim, other parts named. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: string; text?: string }) =>
      part.type === 'text' && typeof part.text === 'string' ? part.text : `[${part.type ?? 'unknown'} content]`,
    )
    .join('\n');
}
