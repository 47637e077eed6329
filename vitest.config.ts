import { defineConfig } from 'vitest/config';

// Temporal's native bridge is not safe under worker threads (sdk-typescript #876): use forks.
// One real Temporal dev server is started in globalSetup and shared by all integration files.
export default defineConfig({
  test: {
    pool: 'forks',
    // Most integration tests wait (on timers, servers, the dev server), not compute: three files at
    // once on a 2-core machine take a third of the serial time. REVERIFY_TEST_FORKS overrides.
    poolOptions: { forks: { maxForks: Number(process.env.REVERIFY_TEST_FORKS ?? 3), minForks: 1 } },
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
