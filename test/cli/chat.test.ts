import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

const CHAT = ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', 'src/cli/chat.ts'];
let child: ChildProcessWithoutNullStreams | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  child?.kill();
  child = undefined;
  await server?.close();
  server = undefined;
});

/** Runs the terminal chat as a child process, collecting what it prints. */
function runChat(args: string[], env: Record<string, string> = {}) {
  child = spawn(process.execPath, [...CHAT, ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
  const output = { stdout: '', stderr: '', code: null as number | null };
  child.stdout.on('data', (chunk) => (output.stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (output.stderr += String(chunk)));
  child.on('exit', (code) => (output.code = code));
  const type = (line: string) => child!.stdin.write(`${line}\n`);
  const expectOutput = (pattern: RegExp, what: string) =>
    waitFor(() => pattern.test(output.stdout), {
      what: `${what} in:\n${output.stdout}\n${output.stderr}`,
      timeoutMs: 15_000,
    });
  return { output, type, expectOutput };
}

describe('npm run chat', () => {
  it('enrols, runs the intake, shows timer messages after /advance, and quits cleanly (embedded server)', async () => {
    const chat = runChat(
      ['--embedded', '--phone', '+1 416 555 0177', '--name', 'Ann', '--timezone', 'America/Toronto'],
      { DATABASE_URL: 'sqlite::memory:' },
    );
    await chat.expectOutput(/coach> Hi Ann!.*What small daily habit/, 'the greeting');
    chat.type('I want to walk more');
    await chat.expectOutput(/Why does walking matter to you\?/, 'the second question');
    chat.type('I want more energy');
    chat.type('7am');
    chat.type('right after breakfast');
    await chat.expectOutput(/Here is your first habit prompt/, 'the first prompt');
    chat.type('/advance 1d');
    await chat.expectOutput(/⏰ coach> Did you do it\?\n {3}1\. Done\n {3}2\. Not yet/, 'the daily poll');
    await chat.expectOutput(/⏩ clock now .*timer\(s\) fired/, 'the clock report');
    chat.type('/quit');
    await waitFor(() => chat.output.code !== null, { what: 'exit' });
    expect(chat.output.code).toBe(0);
    expect(chat.output.stdout).toContain('Bye, +14165550177.');
  }, 40_000);

  it('talks to the assistant flow when enrolled with --flow assistant', async () => {
    const chat = runChat(['--embedded', '--phone', '+1 416 555 0179', '--flow', 'assistant'], {
      DATABASE_URL: 'sqlite::memory:',
    });
    await chat.expectOutput(/offline demo model/, 'the greeting');
    chat.type('what is 6 * 7');
    await chat.expectOutput(/6 \* 7 = 42/, "the calculator's answer");
    chat.type('/quit');
    await waitFor(() => chat.output.code === 0, { what: 'exit 0' });
  }, 30_000);

  it('talks to a running server, finding an already-enrolled participant', async () => {
    server = await startTestServer({ CLOCK: 'virtual' });
    await server.request('POST', '/conversation/participants', { phone_number: '+14165550178', name: 'Bo' });
    const chat = runChat(['--url', server.url, '--phone', '+14165550178']);
    await chat.expectOutput(/Chatting as \+14165550178/, 'the banner');
    chat.type('hello');
    await chat.expectOutput(/coach> Hello! What small daily habit/, 'a reply');
    expect(
      server.sink
        .to('+14165550178')
        .map((message) => message.text)
        .join('\n'),
    ).toContain('Hello!');
    chat.type('/quit');
    await waitFor(() => chat.output.code === 0, { what: 'exit 0' });
  }, 30_000);

  it('exits 2 with the usage on bad flags, and 1 when no server answers', async () => {
    const bad = runChat(['--colour']);
    await waitFor(() => bad.output.code !== null, { what: 'exit' });
    expect(bad.output.code).toBe(2);
    expect(bad.output.stderr).toMatch(/--colour[\s\S]*Usage: npm run chat/);

    const nowhere = runChat(['--phone', '+14165550179', '--url', 'http://127.0.0.1:9']);
    await waitFor(() => nowhere.output.code !== null, { what: 'exit' });
    expect(nowhere.output.code).toBe(1);
    expect(nowhere.output.stderr).toMatch(/unreachable: no PromptPipe server answers/);
  }, 30_000);
});
