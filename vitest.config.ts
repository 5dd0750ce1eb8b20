import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The coding agents and the bench smoke run in their own commands (`npm run test:agents`, `npm run test:bench`).
    exclude: ['test/agents/**', 'test/bench/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
