import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // Tests start real servers, browsers and child processes; a loaded machine needs room for them.
    // A timeout is never what a test checks.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
