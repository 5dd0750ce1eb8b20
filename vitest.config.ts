import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The coding agents and the bench smoke run in their own commands (`npm run test:agents`, `npm run test:bench`).
    exclude: ['test/agents/**', 'test/bench/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two files at once even on a 2-core machine (vitest's default there is one): most of a file's time is spent
    // waiting on sockets, timers and Redis, so two overlap well (about 220 s instead of about 360 s for the suite).
    maxWorkers: 2,
    minWorkers: 1,
  },
})
