import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { forecastServer } from '../fixtures/mcp/forecast-server.ts';
import { startMcpHttpServer } from '../kit/mcp-http-server.ts';
import { startAssistant } from './assistant-kit.ts';

// MCP servers started by the test contribute tools, named server__tool, that the loop calls.
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function mcpConfig(servers: Record<string, unknown>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'promptpipe-mcp-')), 'mcp.json');
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return file;
}

const stdioServer = {
  command: process.execPath,
  args: [
    '--disable-warning=ExperimentalWarning',
    fileURLToPath(new URL('../fixtures/mcp/forecast-stdio.ts', import.meta.url)),
  ],
};

describe('assistant: MCP tools', () => {
  it('a stdio MCP tool: offered with its own schema, called by the loop; the profile keeps its allowlist', async () => {
    const session = await startAssistant(
      {
        route: () => ({ text: 'business' }),
        reply: (_request, index) =>
          index === 0
            ? {
                toolCalls: [
                  { name: 'forecast__get_forecast', arguments: { city: 'London' } },
                  { name: 'forecast__broken', arguments: {} },
                ],
              }
            : { text: 'Sunny in London.' },
      },
      { MCP_CONFIG_FILE: mcpConfig({ forecast: stdioServer }) },
    );
    cleanups.push(() => session.server.close());
    expect(await session.say('weather in London?')).toBe('Sunny in London.');
    const [first, second] = session.requests('reply');
    const offered = first!.tools!;
    expect(offered.map((tool) => tool.name)).toEqual([
      'current_time',
      'calculator',
      'add_note',
      'list_notes',
      'delete_note',
      'forecast__get_forecast',
      'forecast__broken',
      'forecast__crash',
    ]);
    expect(offered.find((tool) => tool.name === 'forecast__get_forecast')!.parameters).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    });
    expect(second!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'London: 18°C and sunny',
      'Error: station offline',
    ]);
    const audit = await session.server.store.listToolCalls(session.id);
    expect(audit.filter((call) => call.name.startsWith('forecast__')).map((call) => [call.name, call.status])).toEqual([
      ['forecast__get_forecast', 'ok'],
      ['forecast__broken', 'error'],
    ]);
  });

  it('a streamable HTTP MCP server works the same way, and an unreachable one only removes its tools', async () => {
    const http = await startMcpHttpServer(forecastServer);
    cleanups.push(() => http.close());
    const session = await startAssistant(
      {
        reply: (_request, index) =>
          index === 0
            ? { toolCalls: [{ name: 'weather__get_forecast', arguments: { city: 'Berlin' } }] }
            : { text: 'Rainy.' },
      },
      { MCP_CONFIG_FILE: mcpConfig({ weather: { url: http.url }, gone: { url: 'http://127.0.0.1:9/mcp' } }) },
    );
    cleanups.push(() => session.server.close());
    expect(await session.say('weather in Berlin?')).toBe('Rainy.');
    const names = session.requests('reply')[0]!.tools!.map((tool) => tool.name);
    expect(names.filter((name) => name.includes('__'))).toEqual(['weather__get_forecast', 'weather__broken']);
    expect(session.requests('reply')[1]!.messages.find((m) => m.role === 'tool')!.content).toBe(
      'Berlin: 12°C, light rain',
    );
  });

  it('a malformed MCP configuration stops start-up naming the field', async () => {
    await expect(
      startAssistant(
        { reply: () => ({ text: '' }) },
        { MCP_CONFIG_FILE: mcpConfig({ 'bad name!': { command: 'x' } }) },
      ),
    ).rejects.toThrow(/MCP_CONFIG_FILE: mcpServers/);
    await expect(
      startAssistant(
        { reply: () => ({ text: '' }) },
        { MCP_CONFIG_FILE: mcpConfig({ forecast: { command: 'x', requireApproval: 'sometimes' } }) },
      ),
    ).rejects.toThrow(/MCP_CONFIG_FILE: mcpServers\.forecast\.requireApproval: "writes", "always", "never"/);
  });
});
