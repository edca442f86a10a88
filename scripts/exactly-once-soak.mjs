#!/usr/bin/env node
// Exactly-once soak (issue #15): the check of __test__/interop/transactional-copier.test.ts with
// many more kills. Kafka's TransactionalMessageCopier copies an input partition to an output
// topic in transactions with random aborts; it is SIGKILLed mid-copy `--copier-kills` times and
// the broker `--broker-kills` times (interleaved at random), then Kafka's Java consumer reads the
// output read_committed: every record exactly once, nothing aborted visible, no transaction
// left open.
//
//   node scripts/exactly-once-soak.mjs [--copier-kills N] [--broker-kills N] [--target ferrolog|kafka]
//
// Prints each kill as it happens and the verifier's lines; exits with vitest's status. Needs
// dist/ (node scripts/build.mjs ts), Java and tools/kafka's jars.
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const args = { copierKills: 50, brokerKills: 10, target: 'ferrolog' }
for (let i = 2; i < process.argv.length; i += 2) {
  const [flag, value] = [process.argv[i], process.argv[i + 1]]
  if (flag === '--copier-kills') args.copierKills = Number(value)
  else if (flag === '--broker-kills') args.brokerKills = Number(value)
  else if (flag === '--target') args.target = value
  else {
    console.error(`unknown argument ${flag}`)
    process.exit(2)
  }
}
const name = args.target === 'kafka' ? 'Apache Kafka' : 'ferrolog'
const env = { ...process.env, EOS_COPIER_KILLS: String(args.copierKills), EOS_BROKER_KILLS: String(args.brokerKills), EOS_LOG: '1' }
const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
const started = Date.now()
const child = spawn(process.execPath, [vitest, 'run', '__test__/interop/transactional-copier.test.ts', '-t', `on ${name}`], { cwd: ROOT, env, stdio: 'inherit' })
child.on('close', (code) => {
  console.log(`${args.copierKills} copier kills, ${args.brokerKills} broker kills on ${name}: ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  process.exit(code ?? 1)
})
