import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // End-to-end tests run bin/kbsync.js as a child process: build dist/ once if it is missing or stale.
    globalSetup: ['test/helpers/build-dist.ts', 'test/helpers/postgres-global.ts'],
  },
});
