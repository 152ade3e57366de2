import { tmpdir } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// One V8 compile cache for the test workers and every service they start (test/helpers/process.ts
// `childEnv`), kept between runs: a process otherwise compiles its few hundred modules anew.
process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), 'agent-service-compile-cache');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // Three test files at a time, whatever the cores: most of a file's time is spent waiting on the
    // processes, browsers and timers it starts, not computing. On the 2-core CI machine the suite
    // took 1,422 s one file at a time (vitest's default there) and 965 s with three, with at most
    // 25 PostgreSQL connections open at once (of the default 100).
    maxWorkers: 3,
    // Tests start real servers, browsers and child processes; a loaded machine needs room for them.
    // A timeout is never what a test checks.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
