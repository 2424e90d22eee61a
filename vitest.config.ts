import { defineConfig } from 'vitest/config';

// One project per tier (docs/development.md, "Tests"); the folder decides a test's tier.
// `npm test` runs them all, `npm run test:unit` (integration, e2e, image, browser) one.
const E2E = ['test/**/e2e/**/*.test.ts'];
const IMAGE = ['test/docker/**/*.test.ts'];
const BROWSER = ['test/browser/**/*.test.ts'];
// Spawned CLI runs and worker threads load dist/: build it once if it is missing or stale.
const BUILD = 'test/helpers/build-dist.ts';
// One real PostgreSQL per project that asks for it, started on the first request.
const POSTGRES = 'test/helpers/postgres-global.ts';
// What the tier needs from the machine (scripts/ci-deps.sh) is there, or the run stops with its install command.
const TOOLS = 'test/helpers/tier-tools.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], setupFiles: ['test/helpers/unit-guard.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...E2E, ...IMAGE, ...BROWSER],
          globalSetup: [TOOLS, BUILD, POSTGRES],
        },
      },
      { extends: true, test: { name: 'e2e', include: E2E, globalSetup: [TOOLS, BUILD, POSTGRES] } },
      { extends: true, test: { name: 'image', include: IMAGE, globalSetup: [TOOLS, BUILD] } },
      { extends: true, test: { name: 'browser', include: BROWSER, globalSetup: [TOOLS, BUILD] } },
    ],
  },
});
