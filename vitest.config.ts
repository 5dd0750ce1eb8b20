import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The coding agents, the bench smoke and the console in a browser run in their own commands (`npm run
    // test:agents`, `npm run test:bench`, `npm run test:console`).
    exclude: ['test/agents/**', 'test/bench/**', 'test/console/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Three files at once even on a 2-core machine (vitest's default there is one): most of a file's time is spent
    // waiting on sockets, timers and Redis, so they overlap well: 195 s here, 280 s with two, where the files' own
    // times add up to about 430 s.
    maxWorkers: 3,
    minWorkers: 1,
  },
})
