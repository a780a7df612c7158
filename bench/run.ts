// `npm run bench [-- --quick] [-- --only=turn,timers,ws] [-- --rounds=N] [-- --from=<results.json>]`: every
// workload in its own process; the runs of a group interleaved in rounds (round 1: A, B, C; round 2: B, C, A; …)
// so shared load hits every system alike; medians, spreads and per-round ratios in one table per
// group, JSON and markdown under bench/results/. Never part of `npm test`.
import { execFileSync, spawn } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { medianResult, type Result } from './lib/rounds.ts';
import { assistantTable, httpTable, lineItems, scaleTable, turnTable, type Measured } from './lib/summary.ts';

const argument = (name: string) => {
  const index = process.argv.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  return index < 0
    ? undefined
    : process.argv[index]!.includes('=')
      ? process.argv[index]!.split('=')[1]
      : process.argv[index + 1];
};
// `--from=<results.json>`: re-renders a saved run's summary (after a change to the tables) without running anything.
const from = argument('from');
const saved = from
  ? (JSON.parse(readFileSync(from, 'utf8')) as {
      sha: string;
      machine: string;
      quick: boolean;
      rounds: number;
      results: Measured[];
      host?: HostCosts[];
    })
  : undefined;
const quick = saved?.quick ?? process.argv.includes('--quick');
const only = argument('only')?.split(',');
const rounds = saved?.rounds ?? Number(argument('rounds') ?? 3);
const conversations = quick ? 100 : 1000; // quick keeps 50 concurrent conversations really concurrent

type Run = Omit<Measured, 'rounds' | 'result'> & { args: string[]; nodeFlags?: string[] };

const turnSystems = [
  ['floor (node:sqlite, one JSON row)', 'turn-floor.ts', [], { baseline: true }],
  ['AI SDK generateText + SQLite', 'turn-aisdk.ts', [], {}],
  ['AI SDK + equal persistence (inbox, transcript, audit, turn, outbox)', 'turn-aisdk-equal.ts', [], { peer: true }],
  ['LangGraph StateGraph + ToolNode + SQLite', 'turn-langgraph.ts', [], {}],
  ['PromptPipe on SQLite', 'turn-engine.ts', ['--store', 'sqlite'], {}],
  ['PromptPipe on PostgreSQL', 'turn-engine.ts', ['--store', 'postgres'], {}],
] as const;
const http = [
  ['PromptPipe (src/main.ts, SQLite, offline model)', 'promptpipe', {}],
  ['floor (node:http + node:sqlite)', 'floor', { baseline: true }],
] as const;
const runs: Run[] = [
  ...[1, 50].flatMap((concurrency) =>
    turnSystems.map(([name, file, args, role]) => {
      const mode = concurrency === 1 ? 'sequential' : `${concurrency} concurrent`;
      return {
        group: 'turn',
        name: `${name}, ${mode}`,
        mode,
        ...role,
        file,
        args: [
          ...args,
          '--conversations',
          String(conversations),
          '--turns',
          '10',
          '--concurrency',
          String(concurrency),
        ],
      };
    }),
  ),
  ...(['reply', 'tool', 'recall'] as const).map((variant) => ({
    group: 'assistant',
    name: {
      reply: 'assistant turn: route + recall extraction + reply',
      tool: '… + one calculator round',
      recall: '… + one round + transcript recall (FTS5)',
    }[variant],
    baseline: variant === 'reply',
    file: 'turn-assistant.ts',
    args: ['--variant', variant, '--conversations', String(quick ? 10 : 200), '--turns', '10', '--concurrency', '10'],
  })),
  // A longer lead than the workload's 4 s default: inserting the timers must finish before any is due, even on a
  // busy machine.
  {
    group: 'timers',
    name: '10k timers due in 10 s, SQLite',
    file: 'timers.ts',
    args: ['--store', 'sqlite', '--timers', quick ? '2000' : '10000', '--leadMs', '15000'],
  },
  {
    group: 'timers',
    name: '10k timers due in 10 s, PostgreSQL',
    file: 'timers.ts',
    args: ['--store', 'postgres', '--timers', quick ? '2000' : '10000'],
  },
  {
    group: 'timers',
    name: "10k timers due in 2 s, 100 participants' conversations, PostgreSQL",
    file: 'timers.ts',
    args: ['--store', 'postgres', '--timers', quick ? '2000' : '10000', '--windowMs', '2000', '--conversations', '100'],
  },
  {
    group: 'memory',
    name: 'memory per idle conversation (10k conversations, one turn each)',
    file: 'idle-memory.ts',
    args: ['--conversations', quick ? '2000' : '10000'],
    nodeFlags: ['--expose-gc'],
  },
  { group: 'ws', name: 'model chunk → WebSocket frame', file: 'ws-relay.ts', args: ['--turns', quick ? '5' : '20'] },
  // The size (#21) in both modes: a run is a minute or two.
  {
    group: 'study-export',
    name: 'study export over HTTP, 1,000 participants × 60 messages, SQLite',
    file: 'study-export.ts',
    args: ['--participants', '1000', '--messages', '60'],
  },
  ...(['saturated', '100 req/s'] as const).flatMap((mode) =>
    http.map(([name, system, role]) => ({
      group: 'http',
      name: `${name}, ${mode}`,
      mode,
      ...role,
      file: 'http-e2e.ts',
      args: ['--system', system, '--seconds', quick ? '4' : '15', ...(mode === 'saturated' ? [] : ['--rate', '100'])],
    })),
  ),
  ...(
    [
      ['sqlite', 1],
      ['postgres', 1],
      ['postgres', 2],
      ['postgres', 3],
    ] as const
  ).map(([store, processes]) => ({
    group: 'scale',
    name: `${processes} process${processes > 1 ? 'es' : ''} on ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
    baseline: store === 'postgres' && processes === 1,
    file: 'scale-out.ts',
    args: [
      '--store',
      store,
      '--processes',
      String(processes),
      '--messages',
      quick ? '200' : '2000',
      '--participants',
      quick ? '100' : '200',
    ],
  })),
].filter((run) => !only || only.includes(run.group));

function runChild(run: Pick<Run, 'name' | 'file' | 'args' | 'nodeFlags'>): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--disable-warning=ExperimentalWarning',
        '--experimental-strip-types',
        ...(run.nodeFlags ?? []),
        `bench/workloads/${run.file}`,
        ...run.args,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk) => (out += String(chunk)));
    child.on('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last));
      else reject(new Error(`${run.name} exited with ${code}: ${out.slice(-500)}`));
    });
  });
}

/** The machine's own costs (bench/workloads/host-costs.ts), at the start and at the end of the run. */
type HostCosts = { walFrameUs: number; socketRoundTripUs: number; jsonTurnUs: number };
const hostCosts = async () => (await runChild({ name: 'host costs', file: 'host-costs.ts', args: [] })) as HostCosts;
const host: HostCosts[] = saved?.host ?? [await hostCosts()];

const measured: Measured[] = saved?.results ?? [];
for (const group of saved ? [] : [...new Set(runs.map((run) => run.group))]) {
  const members = runs.filter((run) => run.group === group);
  const samples = new Map<Run, Array<Result | null>>(members.map((run) => [run, []]));
  for (let round = 0; round < rounds; round++) {
    // Rotated each round, so no system always runs first (right after another group's load).
    for (const run of members.map((_, index) => members[(index + round) % members.length]!)) {
      process.stderr.write(`round ${round + 1}/${rounds}: ${run.name} …`);
      const started = performance.now();
      // A failed round is left out of the medians (and of the ratios of that round), not the whole run.
      samples
        .get(run)!
        .push(await runChild(run).catch((error: unknown) => (process.stderr.write(`\n${String(error)}\n`), null)));
      process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
    }
  }
  for (const run of members) {
    const results = samples.get(run)!;
    const completed = results.filter((result) => result !== null);
    const name =
      completed.length < rounds ? `${run.name} (${completed.length} of ${rounds} rounds ran through)` : run.name;
    if (completed.length > 0) measured.push({ ...run, name, rounds: results, result: medianResult(completed) });
  }
}

if (!saved) host.push(await hostCosts());

const renderers = {
  turn: turnTable,
  assistant: assistantTable,
  timers: lineItems,
  http: httpTable,
  scale: scaleTable,
  memory: lineItems,
  ws: lineItems,
  'study-export': lineItems,
};
const sections = Object.entries(renderers)
  .map(([group, render]) => ({ render, members: measured.filter((run) => run.group === group) }))
  .filter(({ members }) => members.length > 0)
  .map(({ render, members }) => render(members));

function hostLine(start: HostCosts, end: HostCosts): string {
  const both = (key: keyof HostCosts) => `${start[key]} / ${end[key]} µs`;
  return [
    'Host costs (start / end of the run):',
    `a WAL frame written as SQLite writes it (24 B, then 1 KiB: two pwrite calls) ${both('walFrameUs')};`,
    `a 1-byte round trip to another process over a Unix socket ${both('socketRoundTripUs')};`,
    `a turn-sized object to JSON and back ${both('jsonTurnUs')}.`,
    'A machine whose system calls cost more against its JavaScript favours the peers that write less.',
    'See bench/workloads/host-costs.ts.',
  ].join(' ');
}

const sha = saved?.sha ?? execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
const at = from ? statSync(from).mtime : new Date();
const machine =
  saved?.machine ??
  `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `Linux ${release()}, Node ${process.version}`;
const header = [
  `Benchmarks at ${sha} (${at.toISOString()}${quick ? ', --quick' : ''}): ` +
    `medians of ${rounds} interleaved rounds (min–max in brackets), warm-up excluded; ` +
    `${conversations} conversations × 10 turns per turn run.`,
  `Machine: ${machine}`,
  ...(host.length === 2 ? [hostLine(host[0]!, host[1]!)] : []),
  'Ratios are medians of per-round ratios. Statements: node:sqlite executions, or statements sent to ' +
    'PostgreSQL with its round trips in brackets (statements sent behind one still in flight share its trip); ' +
    'commits: COMMITs plus autocommit writes; KiB written: write() syscall bytes of the process (PostgreSQL: ' +
    "WAL records of its database); CPU ms/turn: the workload process's user + system time over the timed " +
    "part (PostgreSQL's own backends not included). See bench/lib/meter.ts.",
].join('\n');
const body = sections.map((lines) => lines.join('\n')).join('\n\n');
process.stdout.write(`\n${header}\n\n${body}\n`);
mkdirSync('bench/results', { recursive: true });
const stamp = at.toISOString().slice(0, 10);
if (!saved)
  writeFileSync(
    `bench/results/${stamp}-${sha}${quick ? '-quick' : ''}.json`,
    `${JSON.stringify({ sha, machine, host, quick, rounds, results: measured }, null, 2)}\n`,
  );
// A quick run never replaces the full run's summary.
if (!only) writeFileSync(`bench/results/latest${quick ? '-quick' : ''}.md`, `${header}\n\n${body}\n`);
