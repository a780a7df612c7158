import { CONFIG_VARIABLE_NAMES } from './variables.ts';

/** OpenAI's endpoint: what the Go PromptPipe's `OPENAI_API_KEY` always meant. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

type Env = Record<string, string | undefined>;

/** The Go PromptPipe's names (its docs/configuration.md), read as ours when ours are unset. */
const GO_NAMES: Record<string, (value: string, env: Env) => Env> = {
  OPENAI_API_KEY: (value, env) => ({
    LLM_API_KEY: value,
    ...(env.LLM_BASE_URL ? {} : { LLM_BASE_URL: OPENAI_BASE_URL }),
  }),
  GENAI_MODEL: (value) => ({ LLM_MODEL: value }),
  GENAI_TEMPERATURE: (value) => ({ LLM_TEMPERATURE: value }),
  API_ADDR: (value) => listenAddress(value),
  DATABASE_DSN: (value) => ({ DATABASE_URL: databaseUrlOf(value) }),
  PROMPTPIPE_STATE_DIR: (value) => ({ DATABASE_URL: `sqlite:${value.replace(/\/+$/, '')}/promptpipe.sqlite` }),
  DEFAULT_SCHEDULE: (value) => ({ PLATFORM_DEFAULT_SCHEDULE: value }),
};

/** Prefixes of our variables: a name with one of them that is not ours is probably a typo. */
const OUR_PREFIXES = [
  'LLM_',
  'PROMPTPIPE_',
  'DATABASE_',
  'SQLITE_',
  'WHATSAPP_',
  'TWILIO_',
  'ASSISTANT_',
  'OUTBOUND_',
  'MODEL_',
  'CHAT_',
  'MCP_',
  'LOG_',
  'FEEDBACK_',
  'SCHEDULER_',
  'INTAKE_',
  'PLATFORM_',
];

/**
 * The environment with the Go PromptPipe's names read as ours (ours win when both are set), which
 * Go name each of ours was read from (so a bad value is reported under the name that was set),
 * and one warning for each Go name used and each name that looks like ours but is not (with the
 * closest of ours).
 */
export function readLegacyNames(env: Env): { env: Env; readFrom: Record<string, string>; warnings: string[] } {
  const translated: Env = { ...env };
  const readFrom: Record<string, string> = {};
  const warnings: string[] = [];
  for (const [name, translate] of Object.entries(GO_NAMES)) {
    const value = env[name]?.trim();
    if (!value) continue;
    const ours = Object.entries(translate(value, env)).filter(([target]) => !translated[target]?.trim());
    for (const [target, targetValue] of ours) {
      translated[target] = targetValue;
      readFrom[target] = name;
    }
    const names = Object.keys(translate(value, env)).join(' and ');
    warnings.push(
      ours.length > 0
        ? `${name} is the Go PromptPipe's name: read as ${names}; rename it, this alias will be removed`
        : `${name} is ignored: ${names} is set`,
    );
  }
  if (env.DATABASE_URL?.trim().startsWith('file:')) {
    translated.DATABASE_URL = databaseUrlOf(env.DATABASE_URL.trim());
    warnings.push(`DATABASE_URL is a Go PromptPipe DSN (file:…): read as ${translated.DATABASE_URL}; write it so`);
  }
  for (const name of Object.keys(env)) {
    if (CONFIG_VARIABLE_NAMES.has(name) || name in GO_NAMES || !OUR_PREFIXES.some((prefix) => name.startsWith(prefix)))
      continue;
    const closest = closestName(name);
    warnings.push(`${name} is not a PromptPipe variable and is ignored${closest ? `; did you mean ${closest}?` : ''}`);
  }
  return { env: translated, readFrom, warnings };
}

/** `:8080`, `0.0.0.0:8080`, `[::1]:8080` → HOST and PORT. */
function listenAddress(address: string): Env {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address);
  if (!match) return { PORT: address };
  const host = match[1] ?? match[2];
  return { ...(host ? { HOST: host } : {}), PORT: match[3] };
}

/** Go DSNs: `file:/path/state.db?_foreign_keys=on` (SQLite) or a postgres:// URL as is. */
export function databaseUrlOf(dsn: string): string {
  if (!dsn.startsWith('file:')) return dsn;
  return `sqlite:${dsn.slice('file:'.length).split('?')[0]}`;
}

function closestName(name: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of CONFIG_VARIABLE_NAMES) {
    const distance = editDistance(name, candidate);
    if (distance <= Math.max(2, Math.floor(candidate.length / 5)) && (!best || distance < best.distance))
      best = { name: candidate, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
