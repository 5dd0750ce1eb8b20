import { defineConfig } from 'vitest/config'

// The bench smoke (`npm run test:bench`): each part of `npm run bench` run once, quick, to prove the harness works,
// callgrind included. It takes minutes, so it stays out of `npm test`; `.ci/run` runs it after it.
export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
})
