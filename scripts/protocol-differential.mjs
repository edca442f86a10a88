// The long run of the differential test of the generated codecs against Kafka's own serializer
// (__test__/protocol/messages/differential.test.ts, which CI runs with a few messages per
// version): the same test with COUNT random messages per (message, version), default 200.
//
//   node scripts/protocol-differential.mjs [COUNT]     (npm run differential:protocol)
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const count = process.argv[2] ?? '200'
if (!/^\d+$/.test(count)) throw new Error(`usage: protocol-differential.mjs [COUNT], not ${count}`)
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs')
const run = spawnSync(process.execPath, [vitest, 'run', '__test__/protocol/messages/differential.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, FERROLOG_DIFFERENTIAL_COUNT: count },
})
process.exit(run.status ?? 1)
