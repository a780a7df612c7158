import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './wait-for.ts';

/**
 * The real server (`src/main.ts`, as `npm start` runs it) in a child process, so a test can
 * kill it for real. Its JSON log lines are kept for failure messages.
 */
export class ChildServer {
  url = '';
  readonly log: string[] = [];
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  readonly #child: ChildProcess;

  private constructor(env: Record<string, string>) {
    this.#child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', 'src/main.ts'],
      {
        env: {
          ...process.env,
          HOST: '127.0.0.1',
          PORT: '0',
          LOG_LEVEL: 'info',
          LOG_REDACT: 'false',
          RATE_LIMITS: 'off',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let buffered = '';
    this.#child.stdout!.on('data', (chunk) => {
      buffered += String(chunk);
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) this.#onLine(line);
    });
    this.#child.stderr!.on('data', (chunk) => this.log.push(String(chunk)));
    this.#child.on('exit', (code, signal) => (this.exit = { code, signal }));
  }

  static async start(env: Record<string, string>): Promise<ChildServer> {
    const server = new ChildServer(env);
    try {
      await waitFor(() => server.url || server.exit, { what: 'the server to listen', timeoutMs: 20_000 });
    } catch (error) {
      await server.kill(); // never left running behind a failed test
      throw error;
    }
    if (!server.url)
      throw new Error(`the server exited before listening: ${JSON.stringify(server.exit)}\n${server.log.join('\n')}`);
    return server;
  }

  #onLine(line: string): void {
    this.log.push(line);
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'PromptPipe is listening' && entry.url) this.url = entry.url;
    } catch {
      // Not JSON: kept in the log as it is.
    }
  }

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  async exited(): Promise<NonNullable<ChildServer['exit']>> {
    return waitFor(() => this.exit, {
      what: `the server to exit; log:\n${this.log.slice(-20).join('\n')}`,
      timeoutMs: 20_000,
    });
  }

  /** SIGKILL: the process dies on the spot, holding whatever leases and claims it had. */
  async kill(): Promise<void> {
    if (this.exit) return;
    this.#child.kill('SIGKILL');
    await this.exited();
  }

  /** SIGTERM (a graceful stop), waiting for the exit. */
  async stop(): Promise<void> {
    if (this.exit) return;
    this.#child.kill('SIGTERM');
    await this.exited();
  }
}
