/**
 * The Producer against Apache Kafka 4.4 (tools/kafka/run-broker.sh, one broker for the file, its
 * JVM SIGKILLed and restarted for the idempotence scenario): the scenarios of
 * producer-scenarios.ts, with the outcomes producer.test.ts expects from ferrolog.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { kafkaBrokerPort, runKafkaBroker } from '../helpers/kafka-tools.js'
import { everyCodecScenario, perRecordErrorsScenario, restartScenario, transactionScenario } from './producer-scenarios.js'

let dir: string
let port: number
let bootstrap: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-producer-kafka-'))
  port = kafkaBrokerPort(await runKafkaBroker(dir))
  bootstrap = `127.0.0.1:${port}`
}, 150_000)

afterAll(() => {
  if (!dir) return
  if (process.env.KEEP_KAFKA_LOG) console.log(execFileSync('bash', ['-c', `tail -c 6000 ${dir}/*.log`]).toString())
  execFileSync('bash', [`${__dirname}/../../tools/kafka/stop-broker.sh`, dir], { stdio: 'ignore' })
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

describe('Producer against Apache Kafka 4.4', () => {
  it('sends keyed and keyless records with headers in every codec; each promise gives the record offset', { timeout: 90_000 }, async () => {
    await everyCodecScenario(bootstrap, 'codecs')
  })

  it('a record too large and an unknown topic fail alone, with Kafka errors', { timeout: 90_000 }, async () => {
    await perRecordErrorsScenario(bootstrap, 'errors')
  })

  it('transactions: a copy with sendOffsetsToTransaction and an abort, read exactly once with read_committed', { timeout: 120_000 }, async () => {
    await transactionScenario(bootstrap, 'txn')
  })

  it('idempotence: a broker SIGKILLed and restarted mid-produce loses, duplicates and reorders nothing', { timeout: 240_000 }, async () => {
    await restartScenario(
      () => bootstrap,
      'restarted',
      6,
      30_000,
      async () => {
        const pid = Number(readFileSync(`${dir}/broker.pid`, 'utf8'))
        process.kill(pid, 'SIGKILL')
        while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 100))
        rmSync(`${dir}/broker.pid`, { force: true })
        await runKafkaBroker(dir, ['--port', String(port)])
      },
    )
  })
})

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
