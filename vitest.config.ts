import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Each file gets its own process: servers, databases and ports never leak between files.
    pool: 'forks',
  },
});
