/**
 * The Producer against ferrolog (producer-scenarios.ts; the same against Apache Kafka 4.4 in
 * producer-kafka.test.ts): every codec, per-record errors, transactions with
 * sendOffsetsToTransaction read by a read_committed Consumer (in-process broker), and
 * idempotence through a broker in a child process SIGKILLed and restarted mid-produce.
 */
import { afterAll, beforeAll, describe, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import { spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { everyCodecScenario, perRecordErrorsScenario, restartScenario, transactionScenario } from './producer-scenarios.js'

let broker: Broker
let bootstrap: string

beforeAll(async () => {
  broker = await startBroker({ config: { 'auto.create.topics.enable': 'false' } })
  bootstrap = broker.bootstrapServers
})

afterAll(async () => {
  await broker?.stop()
})

describe('Producer against ferrolog', () => {
  it('sends keyed and keyless records with headers in every codec; each promise gives the record offset', { timeout: 60_000 }, async () => {
    await everyCodecScenario(bootstrap, 'codecs')
  })

  it('a record too large and an unknown topic fail alone, with Kafka errors', { timeout: 60_000 }, async () => {
    await perRecordErrorsScenario(bootstrap, 'errors')
  })

  it('transactions: a copy with sendOffsetsToTransaction and an abort, read exactly once with read_committed', { timeout: 90_000 }, async () => {
    await transactionScenario(bootstrap, 'txn')
  })

  it('idempotence: a broker SIGKILLed and restarted mid-produce loses, duplicates and reorders nothing', { timeout: 150_000 }, async () => {
    let child: BrokerProcess = await spawnBroker({})
    const port = child.port
    try {
      await restartScenario(
        () => `127.0.0.1:${port}`,
        'restarted',
        6,
        30_000,
        async () => {
          child.child.kill('SIGKILL')
          await new Promise((resolve) => child.child.once('close', resolve))
          await new Promise((resolve) => setTimeout(resolve, 500))
          child = await spawnBroker({ dataDir: child.dataDir, port })
        },
      )
    } finally {
      await child.stop()
    }
  })
})
