// The machine's own costs, measured at the start and the end of a bench run: what a WAL frame's
// write, a wake-up of another process and a piece of plain JavaScript cost here. Figures from two
// machines differ by more than their CPUs' speed: a virtual machine may make every system call
// several times dearer than the JavaScript around it, and a turn that writes ~40 WAL frames (two
// `pwrite`s each) feels that where a JavaScript-bound peer does not. This makes the difference
// visible beside the tables instead of leaving readers to guess it.
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../lib/rounds.ts';
import { flags, report, round } from '../lib/stats.ts';

const opts = flags({ repeats: 5 });

/** The median of `repeats` timings of `run`, in µs per operation. */
async function timed(operations: number, run: () => void | Promise<void>): Promise<number> {
  const timings: number[] = [];
  for (let repeat = 0; repeat < opts.repeats; repeat++) {
    const started = performance.now();
    await run();
    timings.push(((performance.now() - started) * 1000) / operations);
  }
  return round(median(timings), 3);
}

/** A WAL frame as SQLite writes it: a 24-byte header, then a 1 KiB page, each its own `pwrite`. */
async function walFrameUs(directory: string): Promise<number> {
  const fd = openSync(join(directory, 'frames'), 'w');
  const header = Buffer.alloc(24, 1);
  const page = Buffer.alloc(1024, 2);
  const frames = 10_000;
  try {
    return await timed(frames, () => {
      for (let frame = 0; frame < frames; frame++) {
        const at = (frame % 4096) * 1048;
        writeSync(fd, header, 0, 24, at);
        writeSync(fd, page, 0, 1024, at + 24);
      }
    });
  } finally {
    closeSync(fd);
  }
}

/** The echoing peer: another process, so each trip wakes two processes, as a request to a database does. */
const ECHO = `
const server = require('node:net').createServer((socket) => socket.on('data', (data) => socket.write(data)));
server.listen(process.argv[1], () => process.stdout.write('ready\\n'));
process.stdin.on('end', () => process.exit(0)).resume();`;

/** One byte to an echoing process over a Unix socket and back: two wake-ups, four system calls at least. */
async function roundTripUs(directory: string): Promise<number> {
  const path = join(directory, 'echo.sock');
  const peer = spawn(process.execPath, ['-e', ECHO, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((resolve) => peer.stdout.once('data', resolve));
  const socket: Socket = connect(path);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.setNoDelay(true);
  const trips = 5_000;
  const perTrip = await timed(trips, async () => {
    for (let trip = 0; trip < trips; trip++) {
      await new Promise((resolve) => {
        socket.once('data', resolve);
        socket.write('x');
      });
    }
  });
  socket.destroy();
  peer.stdin.end();
  return perTrip;
}

/** Plain JavaScript: a turn-sized object (a profile, two tool calls, a reply) to JSON and back. */
async function jsonUs(): Promise<number> {
  const turn = {
    profile: { habit: 'a short walk after lunch', intensity: 'low', tone: ['warm', 'brief'], successes: 12 },
    calls: [
      { name: 'save_user_profile', arguments: { habit_domain: 'movement', motivational_frame: 'energy' } },
      { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '12:30' } },
    ],
    reply: 'Great choice. A short walk after lunch is a habit that sticks. I will remind you at 12:30.',
  };
  let sink = 0;
  const value = await timed(20_000, () => {
    for (let index = 0; index < 20_000; index++)
      sink += (JSON.parse(JSON.stringify(turn)) as { reply: string }).reply.length;
  });
  if (sink === 0) throw new Error('unreachable');
  return value;
}

const directory = mkdtempSync(join(tmpdir(), 'host-costs-'));
try {
  report({
    walFrameUs: await walFrameUs(directory),
    socketRoundTripUs: await roundTripUs(directory),
    jsonTurnUs: await jsonUs(),
  });
} finally {
  rmSync(directory, { recursive: true, force: true });
}
