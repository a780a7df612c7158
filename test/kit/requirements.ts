import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/** The PostgreSQL database the suites use (a server with trust auth on this machine). */
export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Set by `vitest.config.ts` for test processes: false only when the requirement is missing outside CI. */
export const POSTGRES_READY = process.env.PP_TEST_POSTGRES !== 'missing';

/**
 * What the suite needs beyond npm packages, checked once before any test file runs:
 * a PostgreSQL server and Debian's Chromium. A file that needs one says so on a line of its own,
 * `// @requires postgres` or `// @requires chromium`. Where something is missing, its files are
 * left out with one line saying what and why, unless `CI` is set: there everything is required.
 */
export async function checkTestRequirements(
  testRoot: string,
): Promise<{ exclude: string[]; env: Record<string, string> }> {
  const missing = new Map<string, string>();
  const postgres = await postgresProblem(PG_URL);
  if (postgres) missing.set('postgres', `no PostgreSQL at ${PG_URL} (${postgres}); set TEST_DATABASE_URL`);
  if (!existsSync(CHROMIUM_PATH))
    missing.set('chromium', `no Chromium at ${CHROMIUM_PATH}; apt-get install chromium or set CHROMIUM_PATH`);
  if (missing.size > 0 && process.env.CI) throw new Error(`CI needs every suite: ${[...missing.values()].join('; ')}`);
  const exclude: string[] = [];
  for (const [requirement, why] of missing) {
    const files = filesRequiring(testRoot, requirement);
    exclude.push(...files);
    console.warn(`skipping ${files.length} test file${files.length === 1 ? '' : 's'} that need ${requirement}: ${why}`);
  }
  return { exclude, env: missing.has('postgres') ? { PP_TEST_POSTGRES: 'missing' } : {} };
}

async function postgresProblem(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function filesRequiring(root: string, requirement: string): string[] {
  const marker = new RegExp(`^// @requires ${requirement}$`, 'm');
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join(root, file))
    .filter((file) => marker.test(readFileSync(file, 'utf8')));
}
