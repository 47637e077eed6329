import { defineConfig } from 'vitest/config';

// Temporal's native bridge is not safe under worker threads (sdk-typescript #876): use forks.
// One real Temporal dev server is started in globalSetup and shared by all integration files.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
