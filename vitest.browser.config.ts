import { defineConfig } from 'vitest/config';

/**
 * The real-browser tests (test/browser): headless Chromium, the system's (/usr/bin/chromium, or
 * CHROMIUM_PATH), driven by playwright-core over the local service. Run with `npm run test:browser`;
 * they fail when the browser is missing.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 90_000,
    globalSetup: ['test/support/build-console.ts'],
    env: {
      LOG_LEVEL: 'silent',
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
