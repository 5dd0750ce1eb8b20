// `npm run soak [-- --minutes N | --seconds N] [vitest options]`: runs the soak (soak/soak.test.ts) for that long,
// 10 minutes by default (or SOAK_SECONDS), on the seed SOAK_SEED (default 39). Exits non-zero when an invariant fails.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const args = process.argv.slice(2)
let seconds = Number(process.env.SOAK_SECONDS ?? 600)
const passed = []
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--minutes') seconds = Number(args[++i]) * 60
  else if (args[i] === '--seconds') seconds = Number(args[++i])
  else passed.push(args[i])
}
if (!(seconds > 0)) {
  console.error('soak: --minutes or --seconds takes a positive number')
  process.exit(2)
}
const root = fileURLToPath(new URL('..', import.meta.url))
const result = spawnSync('npx', ['vitest', 'run', '--config', 'vitest.soak.config.ts', ...passed], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, SOAK_SECONDS: String(seconds) },
})
process.exit(result.status ?? 1)
