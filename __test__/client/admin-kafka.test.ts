/**
 * The Admin against Apache Kafka 4.4 (tools/kafka/run-broker.sh, one broker for the file): the
 * scenarios of admin-scenarios.ts, with the outcomes admin.test.ts expects from ferrolog.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { kafkaBrokerPort, runKafkaBroker } from '../helpers/kafka-tools.js'
import { clusterScenario, configsScenario, groupsScenario, offsetsScenario, topicsScenario } from './admin-scenarios.js'

let dir: string
let bootstrap: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-admin-kafka-'))
  bootstrap = `127.0.0.1:${kafkaBrokerPort(await runKafkaBroker(dir))}`
}, 150_000)

afterAll(() => {
  if (!dir) return
  if (process.env.KEEP_KAFKA_LOG) console.log(execFileSync('bash', ['-c', `tail -c 6000 ${dir}/*.log`]).toString())
  execFileSync('bash', [`${__dirname}/../../tools/kafka/stop-broker.sh`, dir], { stdio: 'ignore' })
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

describe('Admin against Apache Kafka 4.4', () => {
  it('topics: create, list, describe, add partitions, delete; per-topic errors', { timeout: 90_000 }, async () => {
    await topicsScenario(bootstrap, 'topics')
  })

  it('configs: describe with sources, incremental alter (set, delete), per-resource errors', { timeout: 90_000 }, async () => {
    await configsScenario(bootstrap, 'configs')
  })

  it("groups: a Consumer group's offsets listed, altered, deleted; the group described and deleted", { timeout: 120_000 }, async () => {
    await groupsScenario(bootstrap, 'groups')
  })

  it('listOffsets (earliest, latest, timestamp, max timestamp) and deleteRecords', { timeout: 90_000 }, async () => {
    await offsetsScenario(bootstrap, 'offsets')
  })

  it('describeCluster, describeTransactions and describeProducers of a transactional Producer', { timeout: 90_000 }, async () => {
    await clusterScenario(bootstrap, 'cluster')
  })
})
