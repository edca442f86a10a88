/**
 * The Producer against ferrolog (producer-scenarios.ts; the same against Apache Kafka 4.4 in
 * producer-kafka.test.ts): every codec, per-record errors, transactions with
 * sendOffsetsToTransaction read by a read_committed Consumer (in-process broker), and
 * idempotence through a broker in a child process SIGKILLed and restarted mid-produce.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Producer } from '../../ts/client/producer.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import { spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { createTopic, everyCodecScenario, perRecordErrorsScenario, restartScenario, transactionScenario } from './producer-scenarios.js'

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

  it('waitForBufferSpace holds a caller back while sends wait for their topic metadata, as a blocking send does', { timeout: 60_000 }, async () => {
    await createTopic(bootstrap, 'paced', 2)
    // A small buffer: 2,000 records of 1 KiB outrun it many times over.
    const producer = new Producer({ bootstrapServers: bootstrap, 'buffer.memory': 64 * 1024, 'linger.ms': 1 })
    try {
      const first = producer.send({ topic: 'paced', value: 'first' })
      let resolved = false
      const space = producer.waitForBufferSpace().then(() => (resolved = true))
      // Learning the topic takes round trips (connect, ApiVersions, Metadata): not one turn of the loop.
      await new Promise((resolve) => setImmediate(resolve))
      expect(resolved).toBe(false)
      await space
      await first
      // Paced by its awaits, a stream of sends never waits max.block.ms, and the waiting never exceeds one step.
      const value = Buffer.alloc(1024, 1)
      const sends: Array<Promise<unknown>> = []
      let mostBuffered = 0
      for (let i = 0; i < 2000; i++) {
        sends.push(producer.send({ topic: 'paced', value }))
        if (i % 16 === 15) {
          await producer.waitForBufferSpace()
          mostBuffered = Math.max(mostBuffered, producer.bufferedBytes)
        }
      }
      await Promise.all(sends)
      expect(mostBuffered).toBeLessThanOrEqual(64 * 1024)
    } finally {
      await producer.close()
    }
  })
})
