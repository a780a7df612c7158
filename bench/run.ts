// `npm run bench [-- --quick] [-- --only turn,timers,ws]`: every workload in its own process,
// one table, JSON and markdown results under bench/results/. Never part of `npm test`.
import { execFileSync, spawn } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';

const quick = process.argv.includes('--quick');
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
const conversations = quick ? 100 : 1000;

/** A workload's JSON report (its shape depends on the workload). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- read back from a child's JSON line
type Result = Record<string, any>;

interface Run {
  group: string;
  name: string;
  file: string;
  args: string[];
  nodeFlags?: string[];
}

const turnSystems = [
  ['floor (node:sqlite, one JSON row)', 'turn-floor.ts', []],
  ['AI SDK generateText + SQLite', 'turn-aisdk.ts', []],
  ['LangGraph StateGraph + ToolNode + SQLite', 'turn-langgraph.ts', []],
  ['PromptPipe on SQLite', 'turn-engine.ts', ['--store', 'sqlite']],
  ['PromptPipe on PostgreSQL', 'turn-engine.ts', ['--store', 'postgres']],
] as const;
const runs: Run[] = [
  ...[1, 50].flatMap((concurrency) =>
    turnSystems.map(([name, file, args]) => ({
      group: 'turn',
      name: `${name}, ${concurrency === 1 ? 'sequential' : `${concurrency} concurrent`}`,
      file,
      args: [...args, '--conversations', String(conversations), '--turns', '10', '--concurrency', String(concurrency)],
    })),
  ),
  ...(['reply', 'tool', 'recall'] as const).map((variant) => ({
    group: 'assistant',
    name: { reply: 'assistant turn: route + recall extraction + reply', tool: '… + one calculator round', recall: '… + one round + transcript recall (FTS5)' }[variant],
    file: 'turn-assistant.ts',
    args: ['--variant', variant, '--conversations', String(quick ? 50 : 200), '--turns', '10', '--concurrency', '10'],
  })),
  { group: 'timers', name: '10k timers due in 10 s, SQLite', file: 'timers.ts', args: ['--store', 'sqlite', '--timers', quick ? '2000' : '10000'] },
  { group: 'timers', name: '10k timers due in 10 s, PostgreSQL', file: 'timers.ts', args: ['--store', 'postgres', '--timers', quick ? '2000' : '10000'] },
  { group: 'memory', name: 'memory per idle conversation (10k conversations, one turn each)', file: 'idle-memory.ts', args: ['--conversations', quick ? '2000' : '10000'], nodeFlags: ['--expose-gc'] },
  { group: 'ws', name: 'model chunk → WebSocket frame', file: 'ws-relay.ts', args: ['--turns', quick ? '5' : '20'] },
  { group: 'http', name: 'HTTP inbound → webhook delivery, 20 connections, saturated', file: 'http-e2e.ts', args: ['--seconds', quick ? '5' : '15'] },
  { group: 'http', name: 'HTTP inbound → webhook delivery, 20 connections, 100 req/s', file: 'http-e2e.ts', args: ['--seconds', quick ? '5' : '15', '--rate', '100'] },
  ...([['sqlite', 1], ['postgres', 1], ['postgres', 2], ['postgres', 3]] as const).map(([store, processes]) => ({
    group: 'scale',
    name: `${processes} process${processes > 1 ? 'es' : ''} on ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
    file: 'scale-out.ts',
    args: ['--store', store, '--processes', String(processes), '--messages', quick ? '500' : '2000'],
  })),
].filter((run) => !only || only.includes(run.group));

function runChild(run: Run): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', ...(run.nodeFlags ?? []), `bench/workloads/${run.file}`, ...run.args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += String(chunk)));
    child.on('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last));
      else reject(new Error(`${run.name} exited with ${code}: ${out.slice(-500)}`));
    });
  });
}

const results: Array<Run & { result: Result }> = [];
for (const run of runs) {
  process.stderr.write(`running ${run.name} …\n`);
  results.push({ ...run, result: await runChild(run) });
}

const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const lines: string[] = [];
const turns = results.filter((r) => r.group === 'turn');
if (turns.length) {
  lines.push('| turn workload | turns/s | p50 ms | p99 ms | peak RSS MiB | DB MiB | vs floor (turns/s) |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of turns) {
    const mode = r.name.split(', ').at(-1);
    const floor = turns.find((t) => t.file === 'turn-floor.ts' && t.name.endsWith(mode!));
    const ratio = floor ? floor.result.turnsPerSecond / r.result.turnsPerSecond : Number.NaN;
    lines.push(`| ${r.name} | ${fmt(r.result.turnsPerSecond, 0)} | ${fmt(r.result.latencyMs.p50, 2)} | ${fmt(r.result.latencyMs.p99, 2)} | ${fmt(r.result.peakRssMiB)} | ${fmt(r.result.databaseMiB)} | ${r.file === 'turn-floor.ts' ? '1×' : `${fmt(ratio)}× slower`} |`);
  }
  lines.push('');
}
const assistant = results.filter((r) => r.group === 'assistant');
if (assistant.length) {
  const base = assistant.find((r) => r.result.variant === 'reply');
  lines.push('| assistant flow on SQLite (scripted instant model, 10 concurrent conversations) | turns/s | p50 ms | p99 ms | vs the plain reply |', '| --- | ---: | ---: | ---: | ---: |');
  for (const r of assistant) {
    const ratio = base ? base.result.turnsPerSecond / r.result.turnsPerSecond : Number.NaN;
    lines.push(`| ${r.name} | ${fmt(r.result.turnsPerSecond, 0)} | ${fmt(r.result.latencyMs.p50, 2)} | ${fmt(r.result.latencyMs.p99, 2)} | ${r === base ? '1×' : `${fmt(ratio, 2)}× slower`} |`);
  }
  lines.push('');
}
for (const r of results.filter((x) => x.group === 'timers')) {
  lines.push(`- ${r.name}: ${r.result.fired}/${r.result.timers} fired, ${r.result.duplicates} twice, ${r.result.early} early; lateness p50 ${r.result.latenessMs.p50} ms, p99 ${r.result.latenessMs.p99} ms, max ${r.result.latenessMs.max} ms; peak RSS ${r.result.peakRssMiB} MiB`);
}
for (const r of results.filter((x) => x.group === 'http')) {
  lines.push(`- ${r.name}: ${r.result.ackPerSecond} acks/s (202, p50 ${r.result.ackLatencyMs.p50} ms, p99 ${r.result.ackLatencyMs.p99} ms); delivered ${r.result.delivered} of ${r.result.accepted} accepted, ${r.result.redeliveries} twice; message → delivery p50 ${r.result.e2eMs.p50} ms, p99 ${r.result.e2eMs.p99} ms`);
}
const scale = results.filter((x) => x.group === 'scale');
if (scale.length) {
  const baseline = scale.find((r) => r.result.store === 'postgres' && r.result.processes === 1);
  lines.push('', '| scale-out (offline model, 200 participants, 50 concurrent senders, round-robin) | turns/s | vs 1 process on PostgreSQL | message → reply p50 ms | p99 ms |', '| --- | ---: | ---: | ---: | ---: |');
  for (const r of scale) {
    const ratio = baseline ? r.result.turnsPerSecond / baseline.result.turnsPerSecond : Number.NaN;
    lines.push(`| ${r.name} | ${fmt(r.result.turnsPerSecond, 0)} | ${fmt(ratio, 2)}× | ${fmt(r.result.e2eMs.p50, 0)} | ${fmt(r.result.e2eMs.p99, 0)} |`);
  }
  lines.push('');
}
for (const r of results.filter((x) => x.group === 'memory')) {
  lines.push(`- ${r.name}: ${r.result.heapPerConversationBytes} bytes of heap and ${r.result.rssPerConversationBytes} bytes of RSS per conversation (heap ${r.result.heapAfterMiB} MiB after ${r.result.conversations})`);
}
for (const r of results.filter((x) => x.group === 'ws')) {
  lines.push(`- ${r.name}: p50 ${r.result.relayMs.p50} ms, p99 ${r.result.relayMs.p99} ms over ${r.result.tokens} tokens; ${r.result.eventsPerSecond} events/s on one conversation`);
}

const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, Node ${process.version}`;
const header = `Benchmarks at ${sha} (${new Date().toISOString()}${quick ? ', --quick' : ''}): ${conversations} conversations × 10 turns per turn run.\nMachine: ${machine}\n`;
process.stdout.write(`\n${header}\n${lines.join('\n')}\n`);
mkdirSync('bench/results', { recursive: true });
const stamp = new Date().toISOString().slice(0, 10);
writeFileSync(`bench/results/${stamp}-${sha}${quick ? '-quick' : ''}.json`, `${JSON.stringify({ sha, machine, quick, results }, null, 2)}\n`);
if (!quick && !only) writeFileSync('bench/results/latest.md', `${header}\n${lines.join('\n')}\n`);
