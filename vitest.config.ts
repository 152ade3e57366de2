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
    // Five test files at a time, whatever the cores: most of a file's time is spent waiting on the
    // processes, browsers, timers and fsyncs it starts, not computing. On the 2-core machine the
    // suite (both dialects) took 1,422 s one file at a time, 1,456-1,531 s with three once it had
    // grown to 133 files, and 748 s with five (144 files); the test processes used about 790 s of CPU
    // in all (their own ~500 s, the services and browsers they started ~290 s). At most ~45
    // PostgreSQL connections are open at once (of the default 100).
    maxWorkers: 5,
    // Tests start real servers, browsers and child processes; a loaded machine needs room for them.
    // A timeout is never what a test checks.
    testTimeout: 90_000,
    hookTimeout: 120_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
