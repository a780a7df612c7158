// A server under test in its own process (PromptPipe's `src/main.ts` or a bench floor), with its
// pid, so its CPU time can be read from /proc. Port chosen here, so logging can stay quiet.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Servers still running: killed when this process exits, so a workload that fails leaves no
 * server behind to load the next one's runs.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class ServerProcess {
  readonly #child: ChildProcess;
  readonly url: string;
  readonly #stderr: string[] = [];

  private constructor(script: string, port: number, env: Record<string, string>) {
    this.url = `http://127.0.0.1:${port}`;
    this.#child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', script],
      {
        env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    this.#child.stderr!.on('data', (chunk) => this.#stderr.push(String(chunk)));
    running.add(this.#child);
    this.#child.once('exit', () => running.delete(this.#child));
  }

  /** Starts `script` and waits until GET /health answers 200. */
  static async start(script: string, env: Record<string, string>): Promise<ServerProcess> {
    const server = new ServerProcess(script, await freePort(), env);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (server.#child.exitCode !== null) break;
      const ok = await fetch(`${server.url}/health`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) return server;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    server.#child.kill('SIGKILL');
    throw new Error(`${script} did not come up: ${server.#stderr.join('').slice(-2000)}`);
  }

  get pid(): number {
    return this.#child.pid!;
  }

  cpuMs(): number {
    return cpuMs(this.pid);
  }

  /** SIGTERM, then the exit. */
  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.kill('SIGTERM');
    await exited;
  }
}
