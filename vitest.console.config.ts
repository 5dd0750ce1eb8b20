import { defineConfig } from 'vitest/config'

// The console's tests in a real browser (Debian's Chromium through playwright-core): their own command,
// `npm run test:console`, since they need the browser installed.
export default defineConfig({
  test: {
    include: ['test/console/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
    minWorkers: 1,
  },
})
