import { defineConfig } from 'vitest/config'

// The soak (`npm run soak`, see soak/run.mjs): one long run of gateway processes under faults, its invariants one test
// each. It takes minutes, so it stays out of `npm test`; `.ci/run` runs a short form of it after the bench smoke.
export default defineConfig({
  test: {
    include: ['soak/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 3_600_000,
    pool: 'forks',
  },
})
