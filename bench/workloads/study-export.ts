// The study export at scale (issue #21): a study of N participants × M messages written straight
// into a SQLite file (the store's bulk inserts, a few hundred participants per transaction; no
// turns run), then GET /study/export streamed over HTTP from PromptPipe in its own process
// (src/main.ts) to a file here. Four exports, each on a freshly started server: the whole study
// and its first tenth (a cohort), each as `npm start` runs (V8's default heap sizing) and with
// V8's heap capped, which leaves out the headroom V8 takes while a lot is allocated and freed,
// so what the export itself holds shows. The server's RSS comes from /proc/<pid>/status: VmRSS
// just before the request, and its peak over the download (VmHWM after resetting it through
// /proc/<pid>/clear_refs, and VmRSS sampled every 10 ms, whichever is higher); its CPU time from
// /proc/<pid>/stat. Rows are counted by re-reading the ZIP with a CSV parser and checked against
// what was seeded, file by file.
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { parse } from 'csv-parse';
import yauzl, { type Entry } from 'yauzl';
import type { Message, NewOutboxItem, ToolCallRecord, TurnRecord } from '../../src/core/domain.ts';
import { openStore } from '../../src/store/open-store.ts';
import { tempSqliteUrl } from '../../test/kit/test-server.ts';
import { ServerProcess } from '../lib/server-process.ts';
import { flags, report, round } from '../lib/stats.ts';

const opts = flags({ participants: 1000, messages: 60, batch: 250 });
if (opts.messages % 4 !== 0) throw new Error('--messages: a multiple of 4 (a day is prompt, poll, reply, answer)');
const DAYS = opts.messages / 4;
const SUBSET = Math.max(1, Math.round(opts.participants / 10));
const DAY_MS = 86_400_000;
const databaseUrl = tempSqliteUrl();
const MiB = 2 ** 20;

/**
 * One participant's study: each day a prompt and its "Did you do it?" poll from the timer, their
 * answer, and the coach's reply in a turn (the first day's turn saves their profile), every
 * outbound message delivered.
 */
function participantRows(index: number, start: number) {
  const p = `p${index}`;
  const c = `c${index}`;
  const messages: Array<Omit<Message, 'seq'>> = [];
  const turns: TurnRecord[] = [];
  const calls: ToolCallRecord[] = [];
  const outbox: NewOutboxItem[] = [];
  const phone = `+1416${String(5_000_000 + index)}`;
  const out = (id: string, at: Date, text: string, poll: Message['poll'] = null) =>
    outbox.push({
      id: `o${id}`,
      conversationId: c,
      participantId: p,
      channel: 'webhook',
      recipient: phone,
      kind: poll ? 'poll' : 'text',
      text,
      poll,
      idempotencyKey: `k${id}`,
      nextAttemptAt: at,
      createdAt: at,
    });
  for (let day = 0; day < DAYS; day++) {
    const sent = new Date(start + day * DAY_MS + 12 * 3_600_000);
    const replied = new Date(sent.getTime() + 3_600_000);
    const turnId = `t${index}_${day}`;
    const poll = { question: 'Did you do it?', options: ['Done', 'Not yet'], firstNumber: 1 };
    const prompt = 'After your morning coffee, take a ten-minute walk around the block.';
    const answer = ['1', 'Not yet', 'done'][day % 3]!;
    const reply = `Thanks for telling me (${answer}). Tomorrow is another chance to walk, and every step counts.`;
    messages.push(
      { ...base(`${index}_${day}a`, c, sent), role: 'assistant', source: 'timer', text: prompt },
      {
        ...base(`${index}_${day}b`, c, sent),
        role: 'assistant',
        kind: 'poll',
        source: 'timer',
        text: poll.question,
        poll,
      },
      { ...base(`${index}_${day}c`, c, replied), role: 'user', source: 'participant', text: answer },
      { ...base(`${index}_${day}d`, c, replied), role: 'assistant', source: 'model', text: reply, turnId },
    );
    out(`${index}_${day}a`, sent, prompt);
    out(`${index}_${day}b`, sent, poll.question, poll);
    out(`${index}_${day}d`, replied, reply);
    turns.push({
      id: turnId,
      conversationId: c,
      inboxId: null,
      trigger: 'message',
      module: 'FEEDBACK',
      status: 'completed',
      attempts: 1,
      modelCalls: day === 0 ? 2 : 1,
      toolRounds: day === 0 ? 1 : 0,
      modelMs: 900,
      toolMs: day === 0 ? 4 : 0,
      totalMs: 910,
      firstTokenMs: null,
      timeToStatusMs: null,
      error: null,
      startedAt: replied,
      finishedAt: new Date(replied.getTime() + 910),
    });
    if (day === 0)
      calls.push({
        id: `tc${index}`,
        turnId,
        conversationId: c,
        round: 1,
        name: 'save_user_profile',
        arguments: JSON.stringify({
          habit_domain: 'walking',
          motivational_frame: 'energy',
          preferred_time: '08:00',
          prompt_anchor: 'after coffee',
          tone_tags: ['concise'],
          tone_update_source: 'explicit',
        }),
        result: 'Profile saved.',
        status: 'ok',
        durationMs: 4,
        createdAt: replied,
      });
  }
  const enrolled = new Date(start);
  return {
    participant: {
      id: p,
      phoneNumber: phone,
      name: `Participant ${index}`,
      gender: null,
      ethnicity: null,
      background: null,
      timezone: 'America/Toronto',
      status: 'active' as const,
      cohort: index < SUBSET ? 'first-tenth' : 'rest',
      debug: false,
      enrolledAt: enrolled,
      createdAt: enrolled,
      updatedAt: enrolled,
    },
    conversation: {
      id: c,
      participantId: p,
      channel: 'webhook',
      flow: 'habit-coach',
      state: 'CONVERSATION_ACTIVE',
      subState: 'FEEDBACK',
      version: 0,
      createdAt: enrolled,
      updatedAt: enrolled,
    },
    messages,
    turns,
    calls,
    outbox,
  };
}

function base(id: string, conversationId: string, createdAt: Date) {
  return { id: `m${id}`, conversationId, kind: 'text' as const, poll: null, turnId: null, createdAt };
}

async function seed(): Promise<{ seconds: number; expected: Record<string, number> }> {
  const started = performance.now();
  const store = await openStore(databaseUrl);
  const start = Date.now() - (DAYS + 1) * DAY_MS;
  try {
    for (let first = 0; first < opts.participants; first += opts.batch) {
      const rows = Array.from({ length: Math.min(opts.batch, opts.participants - first) }, (_, offset) =>
        participantRows(first + offset, start),
      );
      await store.transaction(async (tx) => {
        for (const row of rows) {
          await tx.insertParticipant(row.participant);
          await tx.insertConversation(row.conversation);
          await tx.appendMessages(row.messages);
          for (const turn of row.turns) await tx.insertTurn(turn);
          await tx.insertToolCalls(row.calls);
          await tx.enqueueOutbox(row.outbox);
        }
        // Delivered, so the server finds nothing to send.
        await tx.markOutboxSentMany(
          rows.flatMap((row) =>
            row.outbox.map((item) => ({ id: item.id, at: item.createdAt, attempts: 1, providerMessageId: null })),
          ),
        );
      });
    }
  } finally {
    await store.close();
  }
  const n = opts.participants;
  return {
    seconds: (performance.now() - started) / 1000,
    // What the export must hold, file by file (the first day's profile save: 4 fields and a tone update).
    expected: {
      'participants.csv': n,
      'messages.csv': n * opts.messages,
      'prompts.csv': n * DAYS,
      'poll_answers.csv': n * DAYS,
      'profile_changes.csv': n * 4,
      'tone.csv': n,
      'turns.csv': n * DAYS,
      'tool_calls.csv': n,
      'deliveries.csv': n * DAYS * 3,
    },
  };
}

/** A memory figure of a process, in bytes, from /proc/<pid>/status. */
const status = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;

/** Resets the process's peak RSS (VmHWM) to its current RSS; false where the kernel does not allow it. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * V8's heap held small (its old space at 64 MiB, each young semi-space at 2 MiB): what the export needs, without GC
 * headroom.
 */
const CAPPED_HEAP = '--max-old-space-size=64 --max-semi-space-size=2';

/** One export on a freshly started server: time, bytes, rows per file, and the server's memory and CPU around it. */
async function measureExport(query: string, nodeOptions = '') {
  const server = await ServerProcess.start('src/main.ts', {
    DATABASE_URL: databaseUrl,
    LLM_PROVIDER: 'offline',
    LOG_LEVEL: 'warn',
    RATE_LIMITS: 'off',
    NODE_OPTIONS: nodeOptions,
  });
  const directory = mkdtempSync(join(tmpdir(), 'study-export-'));
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000)); // start-up settles (timers and outbox polled once)
    const before = status(server.pid, 'VmRSS');
    const peakReset = resetPeak(server.pid);
    let sampledPeak = before;
    const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, status(server.pid, 'VmRSS'))), 10);
    const file = join(directory, 'study.zip');
    const cpuBefore = server.cpuMs();
    const started = performance.now();
    const response = await fetch(`${server.url}/study/export${query}`);
    if (response.status !== 200 || !response.body) throw new Error(`export answered ${response.status}`);
    await pipeline(Readable.fromWeb(response.body as WebReadableStream), createWriteStream(file));
    const seconds = (performance.now() - started) / 1000;
    const cpuSeconds = (server.cpuMs() - cpuBefore) / 1000;
    clearInterval(sampler);
    const peak = Math.max(sampledPeak, peakReset ? status(server.pid, 'VmHWM') : 0, status(server.pid, 'VmRSS'));
    const after = status(server.pid, 'VmRSS');
    const rows = await countRows(file);
    return { seconds, cpuSeconds, bytes: statSync(file).size, rows, before, peak, after, peakReset };
  } finally {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Records per file of the ZIP, read back with a CSV parser (a quoted cell may hold a line break). */
async function countRows(file: string): Promise<Record<string, number>> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  const counts: Record<string, number> = {};
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      void (async () => {
        let count = 0;
        const parser = (await zip.openReadStreamPromise(entry)).pipe(parse({ columns: true, bom: true }));
        for await (const _ of parser) count += 1;
        counts[entry.fileName] = count;
        zip.readEntry();
      })().catch(reject);
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  zip.close();
  return counts;
}

function check(rows: Record<string, number>, expected: Record<string, number>, share: number) {
  for (const [name, count] of Object.entries(expected))
    if (rows[name] !== Math.round(count * share))
      throw new Error(`${name}: ${rows[name]} rows exported, ${Math.round(count * share)} seeded`);
}

const seeded = await seed();
const exports = {
  tenth: await measureExport('?cohort=first-tenth'),
  whole: await measureExport(''),
  cappedTenth: await measureExport('?cohort=first-tenth', CAPPED_HEAP),
  capped: await measureExport('', CAPPED_HEAP),
};
rmSync(dirname(databaseUrl.slice('sqlite:'.length)), { recursive: true, force: true });
for (const [name, measured] of Object.entries(exports))
  check(measured.rows, seeded.expected, name.toLowerCase().includes('tenth') ? SUBSET / opts.participants : 1);

const mib = (bytes: number) => round(bytes / MiB, 1);
const totalRows = (rows: Record<string, number>) =>
  Object.entries(rows).reduce((sum, [name, count]) => sum + (name === 'codebook.csv' ? 0 : count), 0);
const memory = (measured: (typeof exports)['whole']) => ({
  seconds: round(measured.seconds, 2),
  serverCpuSeconds: round(measured.cpuSeconds, 2),
  rssBeforeMiB: mib(measured.before),
  peakRssMiB: mib(measured.peak),
  growthMiB: mib(measured.peak - measured.before),
  rssAfterMiB: mib(measured.after),
});
const { whole } = exports;
report({
  participants: opts.participants,
  messagesPerParticipant: opts.messages,
  tenthParticipants: SUBSET,
  seedSeconds: round(seeded.seconds, 1),
  seconds: round(whole.seconds, 2),
  bytes: whole.bytes,
  rows: totalRows(whole.rows),
  rowsPerSecond: round(totalRows(whole.rows) / whole.seconds, 0),
  whole: memory(whole),
  tenth: memory(exports.tenth),
  capped: memory(exports.capped),
  cappedTenth: memory(exports.cappedTenth),
  cappedHeap: CAPPED_HEAP,
  peakFrom: whole.peakReset ? 'VmHWM after clear_refs, and VmRSS every 10 ms' : 'VmRSS every 10 ms',
  filesRows: whole.rows,
});
