import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser tests have their own command: npm run test:browser (vitest.browser.config.ts).
    exclude: ['test/browser/**', 'node_modules/**'],
    // Each file gets its own process: the local service and handlers read process.env.
    pool: 'forks',
    testTimeout: 30_000,
    // The contract test: every answer of the local service checked against the OpenAPI document.
    setupFiles: ['test/support/contract.ts'],
    // The web console's files, built if missing (the console routes serve them).
    globalSetup: ['test/support/build-console.ts'],
    hookTimeout: 60_000,
    env: {
      LOG_LEVEL: 'silent',
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    // In CI, also a JSON report, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
  },
});
