import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * One life of the real server (`src/main.ts`, as `npm start` runs it) for the soak: like
 * test/kit/child-server.ts, but it exposes the pid (for RSS from /proc), keeps only a bounded tail
 * of the log (a soak writes a lot), counts error lines, and waits longer for start-up (a restart
 * during a database black-hole waits for the database).
 */
export class SoakServer {
  url = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** The last log lines (JSON, as the server wrote them). */
  readonly tail: string[] = [];
  /** Log lines at error level or above, by message, e.g. {"turn failed": 12}. */
  readonly errors = new Map<string, number>();
  readonly #child: ChildProcess;
  #exited: Promise<void>;

  constructor(env: Record<string, string>) {
    this.#child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', 'src/main.ts'],
      {
        env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env },
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
    this.#child.stderr!.on('data', (chunk) => this.#keep(String(chunk)));
    this.#exited = new Promise((resolve) =>
      this.#child.on('exit', (code, signal) => ((this.exit = { code, signal }), resolve())),
    );
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** Resolves once the server listens; rejects if it exits first or `timeoutMs` passes. */
  async listening(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.url && !this.exit && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    if (this.url) return;
    if (!this.exit) this.#child.kill('SIGKILL');
    const why = this.exit ? `exit ${JSON.stringify(this.exit)}` : `not listening after ${timeoutMs} ms`;
    throw new Error(`the server did not start (${why}):\n${this.tail.slice(-10).join('\n')}`);
  }

  /** Resident set size from /proc/<pid>/status, in MiB; undefined once the process is gone. */
  rssMiB(): number | undefined {
    if (this.exit) return undefined;
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'))?.[1];
      return kb === undefined ? undefined : Number(kb) / 1024;
    } catch {
      return undefined;
    }
  }

  /** SIGKILL: the process dies on the spot, holding whatever leases and claims it had. */
  async kill(): Promise<void> {
    if (!this.exit) this.#child.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM (a graceful stop), then SIGKILL if it has not exited after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<void> {
    if (this.exit) return;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), timeoutMs);
    await this.#exited;
    clearTimeout(timer);
  }

  #onLine(line: string): void {
    this.#keep(line);
    try {
      const entry = JSON.parse(line) as { msg?: string; url?: string; level?: number };
      if (entry.msg === 'PromptPipe is listening' && entry.url) this.url = entry.url;
      if ((entry.level ?? 0) >= 50) this.errors.set(entry.msg ?? '?', (this.errors.get(entry.msg ?? '?') ?? 0) + 1);
    } catch {
      // Not JSON: kept in the tail as it is.
    }
  }

  #keep(line: string): void {
    this.tail.push(line);
    if (this.tail.length > 200) this.tail.splice(0, this.tail.length - 200);
  }
}
