/**
 * Issue 24 item 5 on the wire: the same DescribeConfigs, AlterConfigs and IncrementalAlterConfigs
 * requests on GROUP resources (type 32) sent to ferrolog and to Apache Kafka 4.4, answered alike:
 * each config's source (GROUP_CONFIG 8, DEFAULT_CONFIG 5), type and read-only flag; AlterConfigs
 * replacing the overrides; APPEND and SUBTRACT refused on every group config (the LIST one too);
 * validateOnly changing nothing; a name given twice; a refused value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { alterConfigsCodec } from '../../ts/protocol/apis/alter-configs.js'
import { ConfigResourceType, describeConfigsCodec } from '../../ts/protocol/apis/describe-configs.js'
import { ConfigOperation, incrementalAlterConfigsCodec, type IncrementalAlterableConfig } from '../../ts/protocol/apis/incremental-alter-configs.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const { GROUP } = ConfigResourceType
let broker: Broker | undefined
let kafkaDir: string | undefined
// Made here, not by tempDir(): its afterEach would remove them after the first test, under both brokers.
let ferrologDir: string | undefined
let kafkaPort = 0

beforeAll(async () => {
  fetchKafkaJars()
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-group-wire-'))
  broker = await startBroker({ dataDir: ferrologDir })
  kafkaDir = mkdtempSync(join(tmpdir(), 'kafka-group-wire-'))
  kafkaPort = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
}, 300_000)
afterAll(async () => {
  try {
    await broker?.stop()
  } finally {
    if (kafkaDir) stopKafkaBroker(kafkaDir)
    for (const dir of [ferrologDir, kafkaDir]) if (dir) rmSync(dir, { recursive: true, force: true })
  }
})

/** Every answer of the scenario on the broker at `port`, group `g`. */
async function scenario(port: number, g: string): Promise<unknown[]> {
  const client = await NetworkClient.connect(`127.0.0.1:${port}`)
  const answers: unknown[] = []
  try {
    const describeOnce = async (keys: string[] | null) => {
      const r = await client.send(describeConfigsCodec, 4, { resources: [{ resourceType: GROUP, resourceName: g, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: false })
      // Kafka lists them in its hash map's order: compared by name.
      return r.results.map((x) => ({ ...x, configs: x.configs.map((c) => ({ ...c, documentation: null })).sort((a, b) => (a.name < b.name ? -1 : 1)) }))
    }
    // Kafka's broker answers DescribeConfigs from its metadata image, which a change reaches a
    // moment after the controller acknowledged it: after a change, ask until the answer shows one
    // (every change of the scenario changes what the next describe of the same keys answers).
    const seen = new Map<string, string>()
    let changed = false
    const describe = async (keys: string[] | null) => {
      const key = JSON.stringify(keys)
      let answer = await describeOnce(keys)
      for (let i = 0; changed && seen.has(key) && JSON.stringify(answer) === seen.get(key) && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        answer = await describeOnce(keys)
      }
      changed = false
      seen.set(key, JSON.stringify(answer))
      return answer
    }
    const noted = <T extends Array<{ errorCode: number }>>(responses: T, validateOnly: boolean): T => {
      if (!validateOnly && responses.every((x) => x.errorCode === 0)) changed = true
      return responses
    }
    const incremental = async (configs: IncrementalAlterableConfig[], validateOnly = false) =>
      noted((await client.send(incrementalAlterConfigsCodec, 1, { resources: [{ resourceType: GROUP, resourceName: g, configs }], validateOnly })).responses, validateOnly)
    const alter = async (configs: Array<{ name: string; value: string | null }>, validateOnly = false) =>
      noted((await client.send(alterConfigsCodec, 2, { resources: [{ resourceType: GROUP, resourceName: g, configs }], validateOnly })).responses, validateOnly)
    const op = (name: string, configOperation: number, value: string | null) => ({ name, configOperation, value })
    const keys = ['consumer.session.timeout.ms', 'share.isolation.level', 'streams.rack.aware.assignment.tags', 'share.renew.acknowledge.enable']

    answers.push(await describe(keys))
    answers.push(await incremental([op('consumer.session.timeout.ms', ConfigOperation.SET, '55000')], true))
    answers.push(await describe(['consumer.session.timeout.ms']))
    answers.push(await incremental([op('streams.rack.aware.assignment.tags', ConfigOperation.APPEND, 'zone,rack'), op('share.isolation.level', ConfigOperation.SET, 'read_committed')]))
    answers.push(await incremental([op('streams.rack.aware.assignment.tags', ConfigOperation.SUBTRACT, 'zone')]))
    answers.push(await incremental([op('streams.rack.aware.assignment.tags', ConfigOperation.SET, 'zone,rack'), op('share.isolation.level', ConfigOperation.SET, 'read_committed')]))
    answers.push(await describe(keys))
    answers.push(await incremental([op('streams.rack.aware.assignment.tags', ConfigOperation.DELETE, null)]))
    answers.push(await incremental([op('consumer.session.timeout.ms', ConfigOperation.APPEND, '1')]))
    answers.push(await incremental([op('share.isolation.level', ConfigOperation.SET, 'dirty')]))
    answers.push(await describe(keys))
    answers.push(await alter([{ name: 'consumer.session.timeout.ms', value: '60000' }]))
    answers.push(await describe(keys))
    answers.push(
      await alter([
        { name: 'share.renew.acknowledge.enable', value: 'false' },
        { name: 'share.renew.acknowledge.enable', value: 'true' },
      ]),
    )
    answers.push(await alter([]))
    answers.push(await describe(keys))
  } finally {
    await client.close()
  }
  return answers
}

describe('group configs on the wire, ferrolog and Apache Kafka 4.4 alike', () => {
  it('DescribeConfigs, AlterConfigs and IncrementalAlterConfigs on a GROUP resource', async () => {
    const kafka = await scenario(kafkaPort, 'wire-group')
    const ferrolog = await scenario(broker!.port, 'wire-group')
    if (process.env.DUMP_WIRE) console.log(JSON.stringify({ kafka, ferrolog }, null, 1))
    for (let i = 0; i < kafka.length; i++) expect({ step: i, answer: ferrolog[i] }).toEqual({ step: i, answer: kafka[i] })
  }, 300_000)
})
