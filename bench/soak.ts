// `npm run soak [-- --minutes 10] [-- --store postgres|sqlite]`: the real server in a child process
// under mixed traffic for N minutes, SIGKILLed every 30 s and restarted, its PostgreSQL black-holed
// for 20 s twice; then a drain, and checks against the database: every acknowledged message stored
// once, answered once, in order per sender; every due timer fired once; every delivery made or
// failed visibly; memory flat across server lives. Never part of `npm test` (vitest only reads
// src/ and test/). Loopback only; stops by itself. Exit code 1 on any violation.
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely: checking them is the point */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { DONE_POLL_QUESTION } from '../src/flows/habit-coach/polls.ts';
import {
  FEEDBACK_FOLLOWUP_TEXT,
  FEEDBACK_NUDGE_TEXT,
  REMINDER_TEXT,
} from '../src/flows/habit-coach/timers/follow-up-timers.ts';
import { createFakeOpenAiServer } from '../test/kit/fake-openai-server.ts';
import { FakeTwilioApi } from '../test/kit/fake-twilio-api.ts';
import { FakeWhatsAppGraph } from '../test/kit/fake-whatsapp-graph.ts';
import { fixture, TW, twilioEnv, WA, whatsappEnv } from '../test/kit/provider-kit.ts';
import { twilioSignature, whatsappSignature } from '../test/kit/provider-signatures.ts';
import { TcpProxy } from '../test/kit/tcp-proxy.ts';
import { WebhookSink } from '../test/kit/webhook-sink.ts';
import { soakModelScript } from './lib/soak-model.ts';
import { SoakServer } from './lib/soak-server.ts';
import { memoryReport, verify, type LedgerEntry, type Life, type RefusedEntry, type Rows } from './lib/soak-verify.ts';

// ---------------------------------------------------------------------------------------------
// Options

const USAGE = `usage: npm run soak -- [--minutes N] [--store postgres|sqlite] [--keep]
  --minutes N              traffic time (default 10; 0.5-240); a drain of up to --drain-seconds follows
  --store postgres|sqlite  default postgres (SOAK_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test_soak;
                           a fresh schema per run, dropped at the end unless --keep); the black-hole needs postgres
  --participants N         default 100, spread over the HTTP channel, WhatsApp and Twilio
  --web-sessions N         default 8 (assistant and service-desk sessions, participant-less)
  --kill-every S           SIGKILL + restart period in seconds (default 30; 0 = never)
  --blackholes N           database black-holes (default 2), each --blackhole-seconds long (default 20)
  --think-ms A-B           pause between one sender's messages (default 6000-18000)
  --clock-step D           virtual time per clock move (default 3h), every --clock-every-ms (default 1500)
  --per-sender-ids N       HTTP senders numbering their message_id per sender (m1, m2, … as in the README) (default 10)
  --rate-limited P         share of model calls answered 429 retry-after 1 (default 0.02)
  --drain-seconds S        longest drain after the traffic (default 150)
  --keep                   keep the schema / SQLite file for inspection`;

const argv = process.argv.slice(2);
function option(name: string, fallback: string): string {
  const index = argv.indexOf(`--${name}`);
  if (index >= 0 && argv[index + 1] !== undefined) return argv[index + 1]!;
  return argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}
function numberOption(name: string, fallback: number, min: number, max: number): number {
  const value = Number(option(name, String(fallback)));
  if (!Number.isFinite(value) || value < min || value > max) fail(`--${name}: must be a number from ${min} to ${max}`);
  return value;
}
function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const known = new Set([
  'minutes',
  'store',
  'participants',
  'web-sessions',
  'kill-every',
  'blackholes',
  'blackhole-seconds',
  'think-ms',
  'clock-step',
  'clock-every-ms',
  'per-sender-ids',
  'rate-limited',
  'drain-seconds',
  'keep',
]);
for (const arg of argv)
  if (arg.startsWith('--') && !known.has(arg.slice(2).split('=')[0]!)) fail(`unknown option ${arg}`);

const opts = {
  minutes: numberOption('minutes', 10, 0.5, 240),
  store: option('store', 'postgres'),
  participants: numberOption('participants', 100, 3, 1000),
  webSessions: numberOption('web-sessions', 8, 0, 100),
  killEverySeconds: numberOption('kill-every', 30, 0, 3600),
  blackholes: numberOption('blackholes', 2, 0, 10),
  blackholeSeconds: numberOption('blackhole-seconds', 20, 1, 600),
  think: option('think-ms', '6000-18000').split('-').map(Number) as [number, number],
  clockStep: option('clock-step', '3h'),
  clockEveryMs: numberOption('clock-every-ms', 1500, 100, 600_000),
  perSenderIds: numberOption('per-sender-ids', 10, 0, 1000),
  rateLimited: numberOption('rate-limited', 0.02, 0, 0.5),
  drainSeconds: numberOption('drain-seconds', 150, 10, 3600),
  keep: argv.includes('--keep'),
};
if (opts.store !== 'postgres' && opts.store !== 'sqlite') fail('--store: postgres or sqlite');
if (opts.think.length !== 2 || !opts.think.every((n) => Number.isFinite(n) && n >= 0) || opts.think[0] > opts.think[1])
  fail('--think-ms: A-B in ms, A <= B');
const clockStepMs = parseStep(opts.clockStep) ?? fail('--clock-step: a duration like 30m, 1h, 1d');
function parseStep(text: string): number | undefined {
  const match = /^(\d+)(s|m|h|d)$/.exec(text);
  return match
    ? Number(match[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd']
    : undefined;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const runStart = Date.now();
const elapsedS = () => Math.round((Date.now() - runStart) / 100) / 10;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
const between = (min: number, max: number) => min + Math.random() * (max - min);
const timeline: Array<{ atS: number; event: string }> = [];
function note(event: string): void {
  timeline.push({ atS: elapsedS(), event });
  process.stderr.write(`[${elapsedS().toFixed(1).padStart(6)} s] ${event}\n`);
}
const nonce = randomBytes(4).toString('hex');
/** A consonant-only marker (no words, no digits: the offline rules read neither), unique per message. */
let tagCounter = 0;
function nextTag(): string {
  const letters = 'bcdfghjklmnpqrstvwxz';
  let n = tagCounter++;
  let out = '';
  for (let i = 0; i < 5; i++, n = Math.floor(n / letters.length)) out += letters[n % letters.length];
  return `ref ${out}`;
}

// ---------------------------------------------------------------------------------------------
// Fakes, database, server

const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no']).toString().trim() !== '';
const model = createFakeOpenAiServer(soakModelScript({ rateLimitedShare: opts.rateLimited }));
await model.start();
const graph = await new FakeWhatsAppGraph({ accessToken: WA.accessToken }).start();
const twilio = await new FakeTwilioApi({ accountSid: TW.accountSid, authToken: TW.authToken }).start();
const sink = await new WebhookSink().start();

const PG_URL = process.env.SOAK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test_soak';
const schema = `soak_${new Date().toISOString().slice(0, 10).replaceAll('-', '')}_${nonce}`;
const sqliteFile = join(tmpdir(), `promptpipe-soak-${nonce}.sqlite`);
let proxy: TcpProxy | null = null;
let databaseUrl: string;
/** Creates the soak's database when the server has none by that name (a fresh machine has only `test`). */
async function ensureDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: maintenance.href });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) await admin.query(`create database "${name.replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
}

if (opts.store === 'postgres') {
  await ensureDatabase(PG_URL);
  const target = new URL(PG_URL);
  proxy = await new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) }).up();
  const viaProxy = new URL(PG_URL);
  viaProxy.port = String(proxy.port);
  databaseUrl = viaProxy.href;
} else {
  databaseUrl = `sqlite:${sqliteFile}`;
}

const CLOCK_START = Date.parse('2026-06-01T12:00:00Z');
/** The furthest the virtual clock was asked to go: a restarted server starts there, so its clock never goes back. */
let clockTarget = CLOCK_START;
/** The server clock as last reported. */
let virtualNow = CLOCK_START;
const serverEnv = (): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  ...(opts.store === 'postgres' ? { DATABASE_SCHEMA: schema } : {}),
  CLOCK: 'virtual',
  CLOCK_START: new Date(clockTarget).toISOString(),
  LLM_BASE_URL: model.baseUrl,
  LLM_API_KEY: 'soak-key',
  LLM_MODEL: 'soak-offline-rules',
  OUTBOUND_WEBHOOK_URL: sink.url,
  ...whatsappEnv(graph),
  ...twilioEnv(twilio),
  // Info is needed for the "listening" line; the server logs little else at info.
  LOG_LEVEL: 'info',
  // The ledger counts one turn per message; rate limits (answering a pile together) have their own tests.
  RATE_LIMITS: 'off',
});

let server = null as SoakServer | null;
let currentLife = null as Life | null;
const lives: Life[] = [];
const serverErrors = new Map<string, number>();
let startFailures = 0;
const failedStarts: Array<{ atS: number; error: string }> = [];
/** Seconds from spawn to listening, per start. */
const startupSeconds: number[] = [];
let lifeListeningAt = 0;

async function startLife(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const candidate = new SoakServer(serverEnv());
    const startedAtS = elapsedS();
    try {
      await candidate.listening(90_000);
    } catch (error) {
      startFailures += 1;
      const why = candidate.tail
        .filter((line) => line.trim())
        .slice(-3)
        .map((line) => line.trim().slice(0, 300))
        .join(' | ');
      note(`server failed to start (attempt ${attempt}): ${String(error).split('\n')[0]} ${why}`);
      failedStarts.push({ atS: startedAtS, error: `${String(error).split('\n')[0]} ${why}` });
      collectErrors(candidate);
      if (attempt >= 5) throw error;
      await sleep(1000);
      continue;
    }
    startupSeconds.push(Math.round((elapsedS() - startedAtS) * 10) / 10);
    currentLife = {
      life: lives.length + 1,
      pid: candidate.pid,
      startedAtS: elapsedS(),
      endedAtS: null,
      ended: 'running',
      samples: [],
    };
    lifeListeningAt = Date.now();
    lives.push(currentLife);
    server = candidate;
    note(
      `server life ${currentLife.life} listening ` +
        `(pid ${candidate.pid}, ${candidate.url}, clock ${new Date(clockTarget).toISOString()})`,
    );
    return;
  }
}

function collectErrors(from: SoakServer): void {
  for (const [message, n] of from.errors) serverErrors.set(message, (serverErrors.get(message) ?? 0) + n);
}

async function endLife(how: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const ending = server;
  const life = currentLife;
  server = null;
  currentLife = null;
  if (!ending || !life) return;
  const rss = ending.rssMiB();
  if (rss !== undefined) life.samples.push([elapsedS(), rss]);
  if (how === 'SIGKILL') await ending.kill();
  else await ending.stop();
  life.endedAtS = elapsedS();
  life.ended = ending.exit?.signal ?? `exit ${ending.exit?.code}`;
  collectErrors(ending);
}

const sampler = setInterval(() => {
  const rss = server?.rssMiB();
  if (rss !== undefined && currentLife) currentLife.samples.push([elapsedS(), Math.round(rss * 10) / 10]);
}, 1000);
// The fake model keeps every request; the soak only needs the answers.
const trimmer = setInterval(() => model.requests.splice(0), 5000);

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    note(`${signal}: stopping`);
    proxy?.restore();
    void (server?.kill() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

async function request(
  method: string,
  path: string,
  body: unknown,
  timeoutMs = 15_000,
): Promise<{ status: number; body: any; headers: Headers }> {
  const target = server;
  if (!target) throw new Error('no server');
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // TwiML and other non-JSON bodies stay text.
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

// ---------------------------------------------------------------------------------------------
// Participants and web sessions

type Channel = 'http' | 'whatsapp' | 'twilio' | 'web';
interface Sender {
  name: string;
  channel: Channel;
  phone: string;
  /** Web sessions: the conversation id. */
  conversationId?: string;
  script: string[];
  /** Where the script loops back to once done (after the intake). */
  loopFrom: number;
  perSenderIds: boolean;
  seq: number;
}

const HABIT_SCRIPT = [
  'I want to walk more',
  'I want more energy',
  '7am',
  'right after breakfast',
  'done',
  'I skipped it today because it rained',
  'yes I did it',
  'not yet',
  'how am I doing',
  'I did it after breakfast',
];
const ASSISTANT_SCRIPT = [
  'hello',
  'what is 17 * 23',
  'add a note: buy oat milk',
  'list my notes',
  'what time is it',
  'what did I ask you earlier about notes',
];
const DESK_SCRIPT = [
  'When is my next appointment?',
  '415-555-0100, ZIP 94107',
  'Can I move it to another day?',
  'How much do I owe?',
  'thanks',
];
const ZONES = ['America/Toronto', 'America/Los_Angeles', 'Europe/Berlin', 'Asia/Kolkata', 'America/Sao_Paulo'];

const senders: Sender[] = [];
const CHANNELS: Channel[] = ['http', 'whatsapp', 'twilio'];
let httpSenders = 0;
for (let p = 0; p < opts.participants; p++) {
  const channel = CHANNELS[p % 3]!;
  const perSenderIds = channel === 'http' && httpSenders++ < opts.perSenderIds;
  senders.push({
    name: `${channel}:${p}`,
    channel,
    phone: `+1416555${String(1000 + p)}`,
    script: HABIT_SCRIPT,
    loopFrom: 4,
    perSenderIds,
    seq: 0,
  });
}

/** Retries `work` (a route the harness needs before the traffic) until it answers `ok`. */
async function setupCall(
  what: string,
  work: () => Promise<{ status: number; body: any }>,
  ok: (status: number) => boolean,
): Promise<any> {
  for (let attempt = 1; attempt <= 10; attempt++) {
    try {
      const response = await work();
      if (ok(response.status)) return response.body;
      if (response.status < 500) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
    } catch (error) {
      if (attempt === 10 || String(error).includes(`${what}:`)) throw error;
    }
    await sleep(500 * attempt);
  }
}

// ---------------------------------------------------------------------------------------------
// The ledger and the senders

const ledger: LedgerEntry[] = [];
const refused: RefusedEntry[] = [];
const unacknowledged: Array<{ sender: string; channelMessageId: string; attempts: number; last: string }> = [];
const harnessErrors: string[] = [];
const ackLatencyMs: number[] = [];

interface Outcome {
  acked?: { inboxId: string | null; duplicate: boolean };
  refused?: { status: number; code: string };
  retry?: string;
}

function messageId(sender: Sender, seq: number): string {
  if (sender.perSenderIds) return `m${seq}`;
  return `soak-${nonce}-${sender.name.replace(':', '-')}-${seq}`;
}

async function attempt(sender: Sender, id: string, text: string): Promise<Outcome> {
  const target = server;
  if (!target) return { retry: 'no server (restarting)' };
  switch (sender.channel) {
    case 'http': {
      const response = await request('POST', '/conversation/inbound', { from: sender.phone, text, message_id: id });
      if (response.status === 202 && response.body?.result?.status === 'queued')
        return {
          acked: { inboxId: response.body.result.inbox_id, duplicate: response.body.result.duplicate === true },
        };
      return classify(response);
    }
    case 'web': {
      const response = await request('POST', `/api/conversations/${sender.conversationId}/message`, {
        type: 'text',
        text,
        message_id: id,
      });
      if (response.status === 202 && typeof response.body?.inboxId === 'string')
        return { acked: { inboxId: response.body.inboxId, duplicate: response.body.duplicate === true } };
      return classify(response);
    }
    case 'whatsapp': {
      const payload = fixture('whatsapp', 'text');
      const value = payload.entry[0].changes[0].value;
      const waId = sender.phone.slice(1);
      value.contacts = [{ profile: { name: sender.name }, wa_id: waId }];
      value.messages = [
        { from: waId, id, timestamp: String(Math.floor(virtualNow / 1000)), type: 'text', text: { body: text } },
      ];
      const raw = JSON.stringify(payload);
      const response = await fetch(`${target.url}/webhooks/whatsapp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': whatsappSignature(WA.appSecret, raw) },
        body: raw,
        signal: AbortSignal.timeout(15_000),
      });
      const body = (await response.json().catch(() => undefined)) as any;
      if (response.status === 200 && body?.messages === 1) return { acked: { inboxId: null, duplicate: false } };
      return classify({ status: response.status, body });
    }
    case 'twilio': {
      const params: Record<string, string> = {
        ...fixture('twilio', 'inbound-sms'),
        From: sender.phone,
        To: TW.from,
        Body: text,
        MessageSid: id,
        SmsSid: id,
        SmsMessageSid: id,
        AccountSid: TW.accountSid,
      };
      const url = `${target.url}/webhooks/twilio`;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilioSignature(TW.authToken, url, params),
        },
        body: new URLSearchParams(params).toString(),
        signal: AbortSignal.timeout(15_000),
      });
      const body = await response.text();
      if (response.status === 200 && body.includes('<Response>')) return { acked: { inboxId: null, duplicate: false } };
      return classify({ status: response.status, body });
    }
  }
}

function classify(response: { status: number; body: any }): Outcome {
  if (response.status >= 500 || response.status === 429)
    return { retry: `${response.status} ${response.body?.code ?? ''}`.trim() };
  if (response.status === 409) return { refused: { status: 409, code: String(response.body?.code ?? '') } };
  return { refused: { status: response.status, code: `unexpected: ${JSON.stringify(response.body).slice(0, 200)}` } };
}

function idOnWire(sender: Sender, seq: number): string {
  if (sender.channel === 'whatsapp') return `wamid.SOAK${nonce}${sender.name.replace(':', '')}x${seq}`;
  if (sender.channel === 'twilio')
    return (
      `SM${nonce}${Number(sender.name.split(':')[1]).toString(16).padStart(8, '0')}` +
      seq.toString(16).padStart(16, '0')
    );
  return messageId(sender, seq);
}

/** Sends one message until the server acknowledges it (the same id every time, as providers retry). */
async function deliver(sender: Sender, base: string): Promise<void> {
  const seq = ++sender.seq;
  const tag = nextTag();
  const text = /[.?!]$/.test(base) ? `${base} ${tag}` : `${base}. ${tag}`;
  const id = idOnWire(sender, seq);
  const giveUpAt = Date.now() + 180_000;
  const sentAt = Date.now();
  for (let attempts = 1; ; attempts++) {
    let outcome: Outcome;
    try {
      outcome = await attempt(sender, id, text);
    } catch (error) {
      outcome = { retry: (error as Error).cause ? String((error as Error & { cause: unknown }).cause) : String(error) };
    }
    if (outcome.acked) {
      ackLatencyMs.push(Date.now() - sentAt);
      ledger.push({
        sender: sender.name,
        channel: sender.channel,
        channelMessageId: sender.channel === 'web' ? `${sender.conversationId}:${id}` : id,
        expectedSender: sender.channel === 'web' ? `web:${sender.conversationId}` : sender.phone,
        text,
        tag,
        seq,
        inboxId: outcome.acked.inboxId,
        duplicateOnFirstAttempt: outcome.acked.duplicate && attempts === 1,
        attempts,
      });
      return;
    }
    if (outcome.refused) {
      if (outcome.refused.status === 409)
        refused.push({ sender: sender.name, channelMessageId: id, ...outcome.refused });
      else harnessErrors.push(`${sender.name} #${seq}: refused ${outcome.refused.status} ${outcome.refused.code}`);
      return;
    }
    if (Date.now() > giveUpAt || interrupted) {
      unacknowledged.push({ sender: sender.name, channelMessageId: id, attempts, last: outcome.retry ?? '' });
      return;
    }
    await sleep(Math.min(250 * 2 ** Math.min(attempts, 5), 4000));
  }
}

async function runSender(sender: Sender, until: number): Promise<void> {
  await sleep(between(0, opts.think[1]));
  for (let step = 0; Date.now() < until && !interrupted; step++) {
    const index =
      step < sender.script.length
        ? step
        : sender.loopFrom + ((step - sender.loopFrom) % (sender.script.length - sender.loopFrom));
    await deliver(sender, sender.script[index]!);
    await sleep(between(opts.think[0], opts.think[1]));
  }
}

/**
 * Follows a web session's event stream (SSE) like a browser: reconnects to whichever server is
 * alive, resuming with Last-Event-ID, and keeps the message ids of the `final` events it saw.
 */
class StreamFollower {
  readonly finals = new Set<string>();
  /** Message ids in the transcript of a `resync` with `full: true` / `full: false`. */
  readonly fullSnapshots = new Set<string>();
  readonly partialSnapshots = new Set<string>();
  connects = 0;
  lastEventAt = 0;
  #lastId: string | null = null;
  #stopped = false;
  #abort = new AbortController();
  readonly #done: Promise<void>;

  readonly conversationId: string;

  constructor(conversationId: string) {
    this.conversationId = conversationId;
    this.#done = this.#run();
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const target = server;
      if (!target) {
        await sleep(200);
        continue;
      }
      try {
        const response = await fetch(`${target.url}/api/conversations/${this.conversationId}/stream`, {
          headers: this.#lastId === null ? {} : { 'last-event-id': this.#lastId },
          signal: this.#abort.signal,
        });
        if (response.ok && response.body) {
          this.connects += 1;
          const decoder = new TextDecoder();
          let buffered = '';
          for await (const chunk of response.body) {
            buffered += decoder.decode(chunk, { stream: true });
            for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
              this.#onEvent(buffered.slice(0, end));
              buffered = buffered.slice(end + 2);
            }
          }
        }
      } catch {
        // The server died or was stopped: reconnect below.
      }
      if (!this.#stopped) await sleep(300);
    }
  }

  #onEvent(block: string): void {
    const field = (name: string) =>
      block
        .split('\n')
        .find((line) => line.startsWith(`${name}: `))
        ?.slice(name.length + 2);
    const id = field('id');
    if (id !== undefined) this.#lastId = id;
    this.lastEventAt = Date.now();
    const type = field('event');
    if (type !== 'final' && type !== 'resync') return;
    try {
      const event = JSON.parse(field('data') ?? '{}') as {
        messageId?: string;
        data?: { full?: boolean; messages?: Array<{ id: string }> };
      };
      if (type === 'final' && event.messageId) this.finals.add(event.messageId);
      // A full resync replaces the client's state (decision 002): its transcript counts as delivered.
      // A partial one only closes a replay; its messages are kept apart, to tell the two cases apart in the report.
      for (const message of event.data?.messages ?? [])
        (event.data?.full ? this.fullSnapshots : this.partialSnapshots).add(message.id);
    } catch {
      // Not JSON: ignored (the check then reports the reply as missing).
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    await this.#done;
  }
}
const followers: StreamFollower[] = [];

// ---------------------------------------------------------------------------------------------
// Chaos: kills, black-holes, the clock

/** Each server life gets `--kill-every` seconds of service after it listens, then SIGKILL and a restart. */
async function killer(until: number): Promise<void> {
  if (opts.killEverySeconds <= 0) return;
  for (;;) {
    const at = lifeListeningAt + opts.killEverySeconds * 1000;
    if (at >= until || interrupted) return;
    await sleep(at - Date.now());
    if (interrupted) return;
    const life = currentLife?.life;
    await endLife('SIGKILL');
    note(`SIGKILL server life ${life}`);
    await startLife();
  }
}

async function blackholes(trafficStart: number, durationMs: number): Promise<void> {
  if (!proxy || opts.blackholes === 0) return;
  for (let i = 0; i < opts.blackholes; i++) {
    const at = trafficStart + ((i + 1) / (opts.blackholes + 1)) * 0.9 * durationMs;
    await sleep(at - Date.now());
    if (interrupted) return;
    proxy.blackhole();
    note(`database black-hole ${i + 1} begins (${opts.blackholeSeconds} s)`);
    await sleep(opts.blackholeSeconds * 1000);
    proxy.restore();
    note(`database black-hole ${i + 1} ends`);
  }
}

let clockMoves = 0;
let clockFailures = 0;
/** Moves the server clock to `to` (absolute, so a move cut short by a kill is never repeated on top). */
async function moveClock(to: number, timeoutMs: number): Promise<boolean> {
  clockTarget = Math.max(clockTarget, to);
  try {
    const response = await request('POST', '/admin/clock', { to: new Date(clockTarget).toISOString() }, timeoutMs);
    if (response.status === 200) {
      virtualNow = Date.parse(response.body.result.now);
      clockMoves += 1;
      return true;
    }
    clockFailures += 1;
    if (response.status < 500)
      harnessErrors.push(`clock move refused: ${response.status} ${JSON.stringify(response.body)}`);
  } catch {
    clockFailures += 1;
  }
  return false;
}

async function ticker(isDone: () => boolean): Promise<void> {
  while (!isDone() && !interrupted) {
    if (server) await moveClock(clockTarget + clockStepMs, 120_000);
    await sleep(opts.clockEveryMs);
  }
}

// ---------------------------------------------------------------------------------------------
// The database, read directly (not through the proxy)

async function readRows(): Promise<Rows> {
  const tables = {
    inbox: 'id, ordinal, channel, channel_message_id, sender, text, conversation_id, status, error',
    turns: 'id, conversation_id, inbox_id, status, "trigger", error',
    messages: 'conversation_id, seq, id, role, kind, text, source, turn_id',
    outbox:
      'id, ordinal, conversation_id, channel, recipient, text, idempotency_key, status, attempts, ' +
      'next_attempt_at, last_error, provider_message_id',
    timers: 'id, kind, conversation_id, due_at, status, attempts, last_error, payload',
  } as const;
  const numeric = new Set(['ordinal', 'seq', 'attempts', 'next_attempt_at', 'due_at']);
  const normalize = (row: Record<string, unknown>) => {
    for (const key of Object.keys(row)) if (numeric.has(key) && row[key] !== null) row[key] = Number(row[key]);
    return row;
  };
  const out: Record<string, unknown[]> = {};
  if (opts.store === 'postgres') {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      for (const [table, columns] of Object.entries(tables))
        out[table] = (await client.query(`select ${columns} from "${schema}".${table}`)).rows.map(normalize);
    } finally {
      await client.end();
    }
  } else {
    const db = new DatabaseSync(sqliteFile, { readOnly: true });
    try {
      for (const [table, columns] of Object.entries(tables))
        out[table] = db
          .prepare(`select ${columns} from ${table}`)
          .all()
          .map((row) => normalize({ ...row }));
    } finally {
      db.close();
    }
  }
  return out as unknown as Rows;
}

async function backlog(): Promise<{ inbox: number; outbox: number; timers: number }> {
  const rows = await readRows();
  return {
    inbox: rows.inbox.filter((row) => row.status === 'pending').length,
    outbox: rows.outbox.filter((row) => row.status === 'pending').length,
    timers: rows.timers.filter(
      (row) => row.status === 'running' || (row.status === 'pending' && row.due_at <= virtualNow),
    ).length,
  };
}

// ---------------------------------------------------------------------------------------------
// The run

/** 2 unless the run gets as far as its checks. */
let exitCode = 2;
try {
  note(
    `soak at ${sha}${dirty ? ' (uncommitted changes)' : ''}: ${opts.minutes} min on ${opts.store}` +
      (opts.store === 'postgres' ? ` (schema ${schema}, through a TCP proxy)` : ` (${sqliteFile})`),
  );
  await startLife();

  // Enrolment and web sessions, before the chaos.
  await Promise.all(
    senders.map((sender, index) =>
      setupCall(
        `enrol ${sender.name}`,
        () =>
          request('POST', '/conversation/participants', {
            phone_number: sender.phone,
            name: `Soak ${sender.name}`,
            timezone: ZONES[index % ZONES.length],
            channel: sender.channel === 'http' ? 'webhook' : sender.channel,
          }),
        (status) => status === 201,
      ),
    ),
  );
  for (let w = 0; w < opts.webSessions; w++) {
    const flow = w % 2 === 0 ? 'assistant' : 'service-desk';
    const body = await setupCall(
      `start a ${flow} session`,
      () => request('POST', '/api/conversations', { flow }),
      (status) => status === 201,
    );
    followers.push(new StreamFollower(body.result.id));
    senders.push({
      name: `web:${flow}:${w}`,
      channel: 'web',
      phone: '',
      conversationId: body.result.id,
      script: flow === 'assistant' ? ASSISTANT_SCRIPT : DESK_SCRIPT,
      loopFrom: 1,
      perSenderIds: false,
      seq: 0,
    });
  }
  const onChannel = (channel: string) => senders.filter((s) => s.channel === channel).length;
  note(
    `enrolled ${opts.participants} participants ` +
      `(${onChannel('http')} HTTP, ${onChannel('whatsapp')} WhatsApp, ${onChannel('twilio')} Twilio) ` +
      `and started ${opts.webSessions} web sessions`,
  );

  const trafficStart = Date.now();
  lifeListeningAt = Math.max(lifeListeningAt, trafficStart); // the first life gets its full period under traffic too
  const durationMs = opts.minutes * 60_000;
  const trafficEnd = trafficStart + durationMs;
  let trafficOver = false;
  const clockLoop = ticker(() => trafficOver);
  const chaos = Promise.all([killer(trafficEnd - 5000), blackholes(trafficStart, durationMs)]);
  await Promise.all(senders.map((sender) => runSender(sender, trafficEnd)));
  note(`traffic over: ${ledger.length} messages acknowledged`);
  await chaos;
  trafficOver = true;
  await clockLoop;
  proxy?.restore();
  if (!server) await startLife();

  // The drain: move the clock in small steps (retries and follow-ups are on the virtual clock)
  // until nothing is pending, due or running twice in a row.
  const drainEnd = Date.now() + opts.drainSeconds * 1000;
  // First a whole day at once, traffic over: every schedule's daily prompt and its follow-ups
  // (reminder, auto-feedback, nudges) come due and fire, even when the clock moves made under
  // load were cut short by the kills.
  const dayAhead = clockTarget + 86_400_000;
  while (virtualNow < dayAhead && Date.now() < drainEnd && !interrupted) {
    if (!(await moveClock(dayAhead, 120_000))) await sleep(1000);
  }
  note(`drain: clock moved a day ahead to ${new Date(virtualNow).toISOString()}`);
  let quiet = 0;
  let left = await backlog();
  while (Date.now() < drainEnd && !interrupted) {
    left = await backlog();
    quiet = left.inbox + left.outbox + left.timers === 0 ? quiet + 1 : 0;
    if (quiet >= 2) break;
    await moveClock(clockTarget + 5 * 60_000, 60_000);
    await sleep(1000);
  }
  note(
    `drain ${quiet >= 2 ? 'complete' : 'timed out'}: ` +
      `${left.inbox} inbox pending, ${left.outbox} outbox pending, ${left.timers} timers due or running`,
  );
  // Let the event streams catch up (no new event for 2 s, at most 20 s), then stop following.
  const streamsQuiet = Date.now() + 20_000;
  while (Date.now() < streamsQuiet && followers.some((follower) => Date.now() - follower.lastEventAt < 2000))
    await sleep(250);
  await Promise.all(followers.map((follower) => follower.stop()));
  const finalClock = await request('GET', '/admin/clock', undefined).then(
    (response) => Date.parse(response.body.result.now),
    () => virtualNow,
  );
  await endLife('SIGTERM');
  clearInterval(sampler);
  clearInterval(trimmer);

  // ---- Checks
  const rows = await readRows();
  const report = verify({
    ledger,
    refused,
    rows,
    now: finalClock,
    deliveries: {
      whatsapp: graph.ids,
      twilio: twilio.sids,
      webhook: sink.received.map((delivery) => String(delivery.headers['idempotency-key'] ?? '')),
    },
    texts: {
      donePoll: DONE_POLL_QUESTION,
      reminder: REMINDER_TEXT,
      nudges: [FEEDBACK_NUDGE_TEXT, FEEDBACK_FOLLOWUP_TEXT],
    },
    streams: followers.map((follower) => ({
      conversationId: follower.conversationId,
      finals: follower.finals,
      fullSnapshots: follower.fullSnapshots,
      partialSnapshots: follower.partialSnapshots,
    })),
  });
  // Sends a fake accepted that no outbox row recorded: re-sends after a kill (at least once), listed for the evidence.
  const recordedIds = new Set(rows.outbox.map((item) => item.provider_message_id));
  const unrecordedResends = [
    ...graph.sent
      .filter((_, index) => !recordedIds.has(graph.ids[index] ?? null))
      .map((send) => ({
        channel: 'whatsapp',
        to: String(send.body?.to ?? ''),
        text: JSON.stringify(send.body?.text?.body ?? send.body?.template ?? send.body?.interactive ?? '').slice(0, 80),
      })),
    ...twilio.sent
      .filter((_, index) => !recordedIds.has(twilio.sids[index] ?? null))
      .map((send) => ({ channel: 'twilio', to: send.params.To ?? '', text: (send.params.Body ?? '').slice(0, 80) })),
  ];
  const memory = memoryReport(lives);
  if (memory.flat === false) report.violations.push({ check: 'memory', detail: memory.verdict });
  for (const error of harnessErrors) report.violations.push({ check: 'refused', detail: `harness: ${error}` });
  const sorted = [...ackLatencyMs].sort((a, b) => a - b);
  const pct = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

  // ---- Summary
  const byCheck = new Map<string, string[]>();
  for (const v of report.violations) byCheck.set(v.check, [...(byCheck.get(v.check) ?? []), v.detail]);
  const lines: string[] = [];
  lines.push(
    '',
    `PromptPipe soak at ${sha}${dirty ? ' (+ uncommitted changes)' : ''}, ` +
      `${opts.minutes} min on ${opts.store}, ${new Date(runStart).toISOString()}`,
  );
  const kills = lives.filter((l) => l.ended === 'SIGKILL').length;
  const blackHoles = timeline.filter((t) => t.event.includes('black-hole') && t.event.includes('begins')).length;
  lines.push(
    `  traffic: ${opts.participants} participants (HTTP, WhatsApp, Twilio) + ${opts.webSessions} web sessions; ` +
      `${lives.length} server lives, ${kills} SIGKILLs, ` +
      `${blackHoles} database black-holes${opts.store === 'sqlite' ? ' (none on SQLite: no network to cut)' : ''}, ` +
      `${startFailures} failed starts; start-up ${Math.min(...startupSeconds)}-${Math.max(...startupSeconds)} s`,
  );
  lines.push(
    `  virtual clock: ${clockMoves} moves (${clockFailures} cut short), ` +
      `${new Date(CLOCK_START).toISOString()} → ${new Date(finalClock).toISOString()}`,
  );
  const ackedPerChannel = CHANNELS.concat('web')
    .map((c) => `${c} ${ledger.filter((e) => e.channel === c).length}`)
    .join(', ');
  lines.push(
    `  acknowledged: ${ledger.length} (${ackedPerChannel}); ack latency p50 ${pct(50)} ms, p99 ${pct(99)} ms; ` +
      `retried before the ack: ${ledger.filter((e) => e.attempts > 1).length}; refused: ${refused.length}; ` +
      `never acknowledged (gave up after 180 s): ${unacknowledged.length}`,
  );
  const c = report.counts;
  /** `a 1, b 2`: the counts `${prefix}.a`, `${prefix}.b`, … */
  const countsOf = (prefix: string, names: string[]) => names.map((s) => `${s} ${c[`${prefix}.${s}`] ?? 0}`).join(', ');
  lines.push(
    `  answered once: ${c['answered.once'] ?? 0}, ` +
      `apologies: ${(c['answered.apology'] ?? 0) + (c['answered.model-apology'] ?? 0)}; ` +
      `inbox: ${countsOf('inbox', ['processed', 'failed', 'ignored', 'pending'])}`,
  );
  lines.push(
    `  outbox: ${countsOf('outbox', ['sent', 'failed', 'pending'])}; ` +
      `fakes received: WhatsApp ${c['deliveries.whatsapp'] ?? 0}, Twilio ${c['deliveries.twilio'] ?? 0}, ` +
      `webhook ${c['deliveries.webhook'] ?? 0}; ` +
      `re-sends the store never recorded (at least once, after a kill): ${c['deliveries.unrecorded-resends'] ?? 0}`,
  );
  lines.push(
    `  web session event streams (SSE, resumed with Last-Event-ID): ${followers.length} followed, ` +
      `${followers.reduce((n, f) => n + f.connects, 0)} connections, ` +
      `${c['stream.replies'] ?? 0} replies committed, ${c['stream.missing'] ?? 0} never streamed`,
  );
  lines.push(
    `  timers: ${countsOf('timers', ['done', 'pending', 'running', 'failed', 'cancelled'])}; ` +
      `done after a retry: ${c['timers.done-after-a-retry'] ?? 0}; ` +
      `sent by timers: ${c['timer-messages.daily prompts'] ?? 0} daily prompts, ` +
      `${c['timer-messages.reminders'] ?? 0} reminders, ${c['timer-messages.feedback nudges'] ?? 0} nudges`,
  );
  lines.push(`  memory (RSS of the server, MiB, per life: start / end / max):`);
  for (const life of memory.lives)
    lines.push(
      `    life ${String(life.life).padStart(2)} ` +
        `(${life.startedAtS.toFixed(0).padStart(4)}-${(life.endedAtS ?? 0).toFixed(0).padStart(4)} s, ` +
        `${life.ended}): ` +
        `${life.startMiB.toFixed(1)} / ${life.endMiB.toFixed(1)} / ${life.maxMiB.toFixed(1)}`,
    );
  lines.push(
    `    trend of the peaks ${memory.peakTrendMiBPerMin.toFixed(2)} MiB/min, ` +
      `of RSS at ${memory.atAgeS} s into each life ${memory.sameAgeTrendMiBPerMin.toFixed(2)} MiB/min; ` +
      memory.verdict,
  );
  if (serverErrors.size > 0)
    lines.push(`  server error log lines: ${[...serverErrors].map(([m, n]) => `${m} ×${n}`).join('; ')}`);
  if (report.warnings.length > 0) {
    lines.push(`  warnings (${report.warnings.length}, visible and documented outcomes):`);
    for (const w of report.warnings.slice(0, 15)) lines.push(`    [${w.check}] ${w.detail}`);
    if (report.warnings.length > 15) lines.push(`    … ${report.warnings.length - 15} more in the JSON`);
  }
  if (report.violations.length === 0) {
    lines.push('  VIOLATIONS: none');
  } else {
    lines.push(`  VIOLATIONS: ${report.violations.length}`);
    for (const [check, details] of byCheck) {
      lines.push(`    ${check} (${details.length}):`);
      for (const detail of details.slice(0, 12)) lines.push(`      - ${detail}`);
      if (details.length > 12) lines.push(`      … ${details.length - 12} more in the JSON`);
    }
  }
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/soak-${new Date().toISOString().slice(0, 10)}-${sha}.json`;
  lines.push(`  result: ${file}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const machine =
    `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `Linux ${release()}, Node ${process.version}`;
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        sha,
        dirty,
        machine,
        startedAt: new Date(runStart).toISOString(),
        options: opts,
        schema: opts.store === 'postgres' ? schema : sqliteFile,
        virtualClock: {
          start: new Date(CLOCK_START).toISOString(),
          end: new Date(finalClock).toISOString(),
          moves: clockMoves,
          cutShort: clockFailures,
        },
        acknowledged: ledger.length,
        ackLatencyMs: { p50: pct(50), p99: pct(99), max: sorted.at(-1) ?? null },
        refused,
        unacknowledged,
        counts: report.counts,
        violations: report.violations,
        warnings: report.warnings,
        memory,
        startupSeconds,
        timeline,
        serverErrors: Object.fromEntries(serverErrors),
        startFailures,
        failedStarts,
        unrecordedResends,
        ledger,
      },
      null,
      2,
    )}\n`,
  );
  exitCode = report.violations.length > 0 ? 1 : 0;
} catch (error) {
  process.stderr.write(`soak harness failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  for (const line of server?.tail.slice(-20) ?? []) process.stderr.write(`  server: ${line}\n`);
} finally {
  clearInterval(sampler);
  clearInterval(trimmer);
  proxy?.restore();
  await server?.kill();
  await proxy?.down();
  await Promise.all(followers.map((follower) => follower.stop()));
  await Promise.all([model.close(), graph.close(), twilio.close(), sink.close()]);
  if (!opts.keep) {
    if (opts.store === 'postgres') {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin
        .connect()
        .then(() => admin.query(`drop schema if exists "${schema}" cascade`))
        .catch((error) => process.stderr.write(`could not drop ${schema}: ${error}\n`))
        .finally(() => admin.end());
    } else {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqliteFile}${suffix}`, { force: true });
    }
  } else {
    process.stderr.write(`kept ${opts.store === 'postgres' ? `schema ${schema} in ${PG_URL}` : sqliteFile}\n`);
  }
}
process.exit(exitCode);
