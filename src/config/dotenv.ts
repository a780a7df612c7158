import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { ConfigError } from './config-error.ts';

/**
 * The environment with an optional `.env` file underneath it: `KEY=VALUE` lines, `#` comments,
 * optional quotes (Node's own parser). A variable set to a non-empty value in `env` wins over the
 * file; an empty one counts as unset, like everywhere else in the config. A missing file is fine.
 * Neither `env` nor `process.env` is changed.
 */
export function loadDotEnv(path: string, env: Record<string, string | undefined>): Record<string, string | undefined> {
  const fromFile = readOptional(path);
  if (fromFile === undefined) return { ...env };
  const merged: Record<string, string | undefined> = { ...parseEnv(fromFile) };
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') merged[name] = value;
    else if (!(name in merged)) merged[name] = value;
  }
  return merged;
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError([
      `${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    ]);
  }
}
