/**
 * kafkajs 2 as an idempotent producer (`idempotent: true`: InitProducerId, then batches with
 * its producer id and sequences): every message lands once, in order, across sends.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

describe('kafkajs idempotent producer', () => {
  it('produces with a producer id and sequences, each message once', async () => {
    broker = await startBroker()
    await broker.createTopic('idem', 1, {})
    const kafka = new Kafka({ clientId: 'ferrolog-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING })
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    try {
      for (let round = 0; round < 5; round++) {
        await producer.send({ topic: 'idem', messages: Array.from({ length: 10 }, (_, i) => ({ value: `r${round}-m${i}` })) })
      }
    } finally {
      await producer.disconnect()
    }
    const log = broker.logManager.getLog('idem', 0)!
    const batches = log.readBatches(0n)
    expect(batches.map((b) => b.baseSequence)).toEqual([0, 10, 20, 30, 40])
    expect(new Set(batches.map((b) => b.producerId)).size).toBe(1)
    expect(batches[0].producerId >= 0n).toBe(true)
    expect(log.readRecords(0n)).toHaveLength(50)
  })
})
