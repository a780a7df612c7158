import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { McpTools } from '../../src/flows/assistant/mcp-tools.ts';
import { forecastServer } from '../fixtures/mcp/forecast-server.ts';
import { startMcpHttpServer } from '../kit/mcp-http-server.ts';
import { waitFor } from '../kit/wait-for.ts';

const script = fileURLToPath(new URL('../fixtures/mcp/forecast-stdio.ts', import.meta.url));
const server = { name: 'forecast', command: process.execPath, args: ['--disable-warning=ExperimentalWarning', script] };
const signal = new AbortController().signal;
let mcp: McpTools | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
});

describe('MCP tool source', () => {
  it("drops a crashed stdio server's tools, then reconnects in the background when the retry time comes", async () => {
    let now = 0;
    mcp = new McpTools({ servers: [server], logger: pino({ level: 'silent' }), timeoutMs: 10_000, now: () => now });
    await mcp.start();
    const names = async () => (await mcp!.tools()).map((tool) => tool.name);
    expect(await names()).toEqual(['forecast__get_forecast', 'forecast__broken', 'forecast__crash']);

    const crash = (await mcp.tools()).find((tool) => tool.name === 'forecast__crash')!;
    await Promise.resolve(crash.execute({}, { signal })).catch(() => undefined);
    await waitFor(async () => (await names()).length === 0, { what: 'tools removed after the crash' });
    expect(await names()).toEqual([]); // not retried before its time

    now += 30_000;
    await waitFor(async () => (await names()).length === 3, { what: 'tools back after the reconnect' });
    const forecast = (await mcp.tools()).find((tool) => tool.name === 'forecast__get_forecast')!;
    expect(await forecast.execute({ city: 'London' }, { signal })).toEqual({
      status: 'ok',
      result: 'London: 18°C and sunny',
    });
  }, 30_000);

  it(
    'drops an HTTP server whose call failed in transport (it never closes the client), and takes it back once ' +
      'it is up again',
    async () => {
      let now = 0;
      let http = await startMcpHttpServer(forecastServer);
      const logged: string[] = [];
      const logger = pino(
        { level: 'info' },
        { write: (line: string) => void logged.push((JSON.parse(line) as { msg: string }).msg) },
      );
      mcp = new McpTools({ servers: [{ name: 'weather', url: http.url }], logger, timeoutMs: 10_000, now: () => now });
      await mcp.start();
      const names = async () => (await mcp!.tools()).map((tool) => tool.name);
      expect(await names()).toEqual(['weather__get_forecast', 'weather__broken']);
      const forecast = (await mcp.tools())[0]!;

      await http.close();
      await expect(Promise.resolve(forecast.execute({ city: 'Oslo' }, { signal }))).rejects.toThrow();
      expect(await names()).toEqual([]); // and a reconnect is attempted at once, which fails while it is down
      await waitFor(() => logged.includes('MCP server unavailable; retrying later'), {
        what: 'the reconnect attempt failed',
      });
      http = await startMcpHttpServer(forecastServer, http.port);
      try {
        now += 30_000;
        await waitFor(async () => (await names()).length === 2, { what: 'tools back after the server restarted' });
        const again = (await mcp.tools())[0]!;
        expect(await again.execute({ city: 'Oslo' }, { signal })).toEqual({
          status: 'ok',
          result: expect.stringContaining('Oslo'),
        });
      } finally {
        await http.close();
      }
    },
    30_000,
  );

  it('starts one connection at a time, however many turns ask for tools at once', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'promptpipe-mcp-')), 'starts.log');
    mcp = new McpTools({
      servers: [{ ...server, env: { MCP_START_LOG: log } }],
      logger: pino({ level: 'silent' }),
      timeoutMs: 10_000,
      now: () => 0,
    });
    // Never started: every tools() call finds the server due for a connection attempt.
    const lists = await Promise.all(Array.from({ length: 5 }, () => mcp!.tools()));
    expect(lists.every((list) => list.length === 0)).toBe(true);
    await waitFor(async () => (await mcp!.tools()).length === 3, { what: 'connected' });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
  }, 30_000);

  it('marks the tools awaiting approval: by default every tool not annotated read-only, or as configured', async () => {
    const http = await startMcpHttpServer(forecastServer);
    const flags = async (requireApproval?: 'writes' | 'always' | 'never' | string[]) => {
      const source = new McpTools({
        servers: [{ name: 'weather', url: http.url, ...(requireApproval ? { requireApproval } : {}) }],
        logger: pino({ level: 'silent' }),
        timeoutMs: 10_000,
      });
      await source.start();
      const tools = await source.tools();
      await source.close();
      return Object.fromEntries(tools.map((tool) => [tool.name, tool.needsApproval]));
    };
    try {
      // Both fixture tools are read-only; the stdio fixture's `crash` is not annotated and waits.
      expect(await flags()).toEqual({ weather__get_forecast: false, weather__broken: false });
      expect(await flags('always')).toEqual({ weather__get_forecast: true, weather__broken: true });
      expect(await flags(['get_forecast'])).toEqual({ weather__get_forecast: true, weather__broken: false });
      mcp = new McpTools({ servers: [server], logger: pino({ level: 'silent' }), timeoutMs: 10_000 });
      await mcp.start();
      const crash = (await mcp.tools()).find((tool) => tool.name === 'forecast__crash')!;
      expect(crash.needsApproval).toBe(true);
      expect(crash.describeCall?.({})).toBe('use "crash" on forecast');
    } finally {
      await http.close();
    }
  }, 30_000);
});
