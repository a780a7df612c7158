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
      // Each file gets its own process: servers, databases and ports never leak between files.
      pool: 'forks',
    },
  };
});
