// Regenerates the configuration docs from src/config/variables.ts: the table in README.md
// (between the config-table markers) and .env.example. `--check` only reports drift.
import { readFileSync, writeFileSync } from 'node:fs';
import { configTableMarkdown, envExample } from '../src/config/config.ts';

const START = '<!-- config-table:start -->';
const END = '<!-- config-table:end -->';

export function renderReadme(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${START} … ${END} block`);
  return `${readme.slice(0, start + START.length)}\n${configTableMarkdown().trim()}\n${readme.slice(end)}`;
}

if (import.meta.main) {
  const check = process.argv.includes('--check');
  const targets = [
    ['README.md', renderReadme(readFileSync('README.md', 'utf8'))],
    ['.env.example', envExample()],
  ] as const;
  let stale = false;
  for (const [file, wanted] of targets) {
    if (readFileSync(file, 'utf8') === wanted) continue;
    stale = true;
    if (!check) writeFileSync(file, wanted);
    console.log(`${check ? 'out of date' : 'updated'}: ${file}`);
  }
  process.exitCode = check && stale ? 1 : 0;
}
