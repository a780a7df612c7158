import { parseArgs } from 'node:util';

export const USAGE = `Talk to a PromptPipe flow as a participant, in the terminal.

Usage: npm run chat -- --phone +14165550123 [options]

  --phone <number>     the participant's phone number (international format); enrolled if new
  --name <name>        their name, when enrolling
  --timezone <zone>    their IANA time zone, when enrolling (default: this machine's)
  --flow <name>        the flow, when enrolling: habit-coach (default), service-desk, assistant
  --url <url>          a running server (default: $PROMPTPIPE_URL or http://127.0.0.1:8080)
  --token <token>      its API token (default: $API_TOKEN)
  --embedded           start a server in this process instead: in-memory SQLite, the offline
                       demo model (or LLM_* from the environment), a virtual clock
  --help               this text

In the chat: type a message and press Enter. Commands: /advance <duration> (virtual clock:
1h, 1d ...), /timers, /state, /help, /quit.`;

export interface ChatArgs {
  phone: string;
  name: string | undefined;
  timezone: string;
  flow: string | undefined;
  url: string;
  token: string | undefined;
  embedded: boolean;
}

export type ParsedArgs = { ok: true; args: ChatArgs } | { ok: false; help: boolean; problem?: string };

export function parseChatArgs(argv: string[], env: Record<string, string | undefined>): ParsedArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        phone: { type: 'string' },
        name: { type: 'string' },
        timezone: { type: 'string' },
        flow: { type: 'string' },
        url: { type: 'string' },
        token: { type: 'string' },
        embedded: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    return { ok: false, help: false, problem: (error as Error).message };
  }
  if (values.help) return { ok: false, help: true };
  if (!values.phone) return { ok: false, help: false, problem: '--phone is required' };
  const url = values.url ?? env.PROMPTPIPE_URL ?? 'http://127.0.0.1:8080';
  if (!/^https?:\/\/[^/]+/.test(url))
    return { ok: false, help: false, problem: `--url must be an http(s) URL (got "${url}")` };
  return {
    ok: true,
    args: {
      phone: values.phone,
      name: values.name,
      timezone: values.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      flow: values.flow,
      url: url.replace(/\/+$/, ''),
      token: values.token ?? env.API_TOKEN,
      embedded: values.embedded,
    },
  };
}
