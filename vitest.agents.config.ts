import { defineConfig } from 'vitest/config'

// The coding-agent tests (`npm run test:agents`): real Claude Code and Codex CLI binaries against a gateway. They
// install about 800 MB of agents on first run and take minutes, so they stay out of `npm test`; `.ci/run` runs them
// after it.
export default defineConfig({
  test: {
    include: ['test/agents/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    pool: 'forks',
    fileParallelism: false,
  },
})
