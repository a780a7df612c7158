import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envExample } from '../../src/config/config.ts';
import { renderReadme } from '../../scripts/sync-config-docs.ts';

// The docs are generated from src/config/variables.ts; these fail when someone forgets to run
// `node --experimental-strip-types scripts/sync-config-docs.ts` after changing a variable.
describe('configuration docs', () => {
  it('README.md lists every variable as variables.ts defines it', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toBe(renderReadme(readme));
  });

  it('.env.example matches variables.ts', () => {
    expect(readFileSync('.env.example', 'utf8')).toBe(envExample());
  });
});
