import { configDefaults, defineConfig } from 'vitest/config';
import { checkTestRequirements } from './test/kit/requirements.ts';

export default defineConfig(async () => {
  // PostgreSQL and Chromium: required in CI; elsewhere their suites are left out, saying so.
  const requirements = await checkTestRequirements('test');
  return {
    test: {
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, ...requirements.exclude],
      env: requirements.env,
      testTimeout: 20_000,
      hookTimeout: 30_000,
      // Child processes (not threads): node:sqlite, signals and SIGKILLed servers behave as in
      // production. Files share a worker's module graph instead of re-importing it per file (the
      // import cost was a fifth of the suite's CPU): each file closes what it opens, and a test
      // that leaves a server or a handle behind shows up as a hang, not as a pass.
      pool: 'forks',
      isolate: false,
    },
  };
});
