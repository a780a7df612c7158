// `npm run chat -- --phone +14165550123`: talk to the flow as a participant, in the terminal.
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import type { SessionEvent } from '../events/session-event.ts';
import { startServer, type RunningServer } from '../server.ts';
import { ChatApi, ChatApiError } from './chat-api.ts';
import { parseChatArgs, USAGE, type ChatArgs } from './chat-args.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const parsed = parseChatArgs(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    if (parsed.problem) process.stderr.write(`${parsed.problem}\n\n`);
    process.stderr.write(`${USAGE}\n`);
    return parsed.help ? 0 : 2;
  }
  const { args } = parsed;
  const embedded = args.embedded ? await startEmbedded() : undefined;
  const api = new ChatApi(embedded?.url ?? args.url, args.token);
  try {
    await api.health().catch(() => {
      throw new ChatApiError(
        'unreachable',
        `no PromptPipe server answers at ${args.url}: start one (npm start) or use --embedded`,
      );
    });
    const participant = await enrolOrFind(api, args);
    out(`Chatting as ${participant.phone_number} (${participant.id}). /help for commands.`);
    return await chat(api, participant.id, participant.phone_number);
  } catch (error) {
    process.stderr.write(`${error instanceof ChatApiError ? `${error.code}: ${error.message}` : String(error)}\n`);
    return 1;
  } finally {
    await embedded?.close();
  }
}

async function startEmbedded(): Promise<RunningServer> {
  const env = process.env;
  const config = loadConfig({
    ...env,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: env.DATABASE_URL ?? 'sqlite::memory:',
    CLOCK: env.CLOCK ?? 'virtual',
    LOG_LEVEL: env.LOG_LEVEL ?? 'silent',
  });
  return startServer(config, pino({ level: config.log.level }));
}

async function enrolOrFind(api: ChatApi, args: ChatArgs) {
  try {
    return await api.enrol({
      phone_number: args.phone,
      name: args.name,
      timezone: args.timezone,
      ...(args.flow ? { flow: args.flow } : {}),
    });
  } catch (error) {
    if (!(error instanceof ChatApiError) || error.code !== 'participant_exists') throw error;
    const existing = await api.findByPhone(args.phone);
    if (!existing) throw error;
    return existing;
  }
}

/** Streams the conversation's events to the terminal and sends each typed line. Resolves with the exit code. */
async function chat(api: ChatApi, participantId: string, phone: string): Promise<number> {
  const printer = new EventPrinter();
  let onFinal: (() => void) | undefined;
  const stop = await api.follow(participantId, (event) => {
    printer.print(event);
    if (event.type === 'final') onFinal?.();
  });
  /** Resolves once the reply has arrived and nothing more came for a moment (or after 30 s). */
  const replied = () =>
    new Promise<void>((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const give = setTimeout(resolve, 30_000);
      onFinal = () => {
        clearTimeout(quiet);
        quiet = setTimeout(() => {
          clearTimeout(give);
          resolve();
        }, 150);
      };
    });
  const lines = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of lines) {
      const text = line.trim();
      if (!text) continue;
      if (text === '/quit' || text === '/exit') break;
      try {
        if (text.startsWith('/')) await command(api, participantId, text);
        else {
          const reply = replied();
          await api.say(participantId, text);
          await reply;
        }
      } catch (error) {
        out(error instanceof ChatApiError ? `! ${error.code}: ${error.message}` : `! ${String(error)}`);
      }
    }
  } finally {
    stop();
    lines.close();
  }
  out(`Bye, ${phone}.`);
  return 0;
}

async function command(api: ChatApi, participantId: string, line: string): Promise<void> {
  const [name, ...rest] = line.split(/\s+/);
  if (name === '/advance') {
    const { now, fired } = await api.advance(rest[0] ?? '1h');
    out(`⏩ clock now ${now}; ${fired} timer(s) fired`);
  } else if (name === '/timers') {
    const timers = await api.timers(participantId);
    out(timers.length ? timers.map((t) => `⏰ ${t.kind} due ${t.due_at}`).join('\n') : 'No pending timers.');
  } else if (name === '/state') {
    const state = await api.state(participantId);
    out(`${state.state} / ${state.sub_state}; profile: ${JSON.stringify(state.profile ?? {})}`);
  } else {
    out(USAGE.slice(USAGE.indexOf('In the chat:')));
  }
}

/** Tokens as they stream; a final as a whole line when nothing streamed; timer sends marked ⏰. */
class EventPrinter {
  #streaming: string | null = null;
  #caughtUp = false;

  print(event: SessionEvent): void {
    if (event.type === 'resync' && !this.#caughtUp) {
      // The first snapshot: show where the conversation stands.
      this.#caughtUp = true;
      for (const message of event.data.messages.slice(-6))
        out(`${message.role === 'user' ? 'you' : 'coach'}> ${message.text}`);
    } else if (event.type === 'token') {
      if (this.#streaming !== event.messageId) process.stdout.write('coach> ');
      this.#streaming = event.messageId;
      process.stdout.write(event.text);
    } else if (event.type === 'final') {
      if (this.#streaming === event.messageId) {
        process.stdout.write('\n');
        this.#streaming = null;
        return;
      }
      const who =
        event.role === 'system'
          ? 'note'
          : ['timer', 'schedule'].includes(String(event.data.source))
            ? '⏰ coach'
            : 'coach';
      out(`${who}> ${event.text}`);
      event.data.poll?.options.forEach((option, index) => out(`   ${index + 1}. ${option}`));
    } else if (event.type === 'error') {
      out(`! ${event.data.code}: ${event.text}`);
    }
  }
}

process.exitCode = await main();
