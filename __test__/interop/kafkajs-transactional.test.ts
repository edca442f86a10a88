/**
 * kafkajs 2 as a transactional producer (`transactionalId`): ferrolog has no transaction
 * coordinator, and FindCoordinator for the transactional id says so with a non-retriable error
 * (UNSUPPORTED_VERSION), so the producer fails at once instead of retrying a "coordinator not
 * available" for minutes; idempotent and plain producers are unaffected.
 */
import { Kafka, logLevel } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

describe('kafkajs transactional producer', () => {
  it('fails fast with a non-retriable error, the broker still serving', { timeout: 30_000 }, async () => {
    broker = await startBroker()
    await broker.createTopic('tx', 1, {})
    const kafka = new Kafka({ clientId: 'ferrolog-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING })
    const producer = kafka.producer({ transactionalId: 'my-tx', idempotent: true, maxInFlightRequests: 1 })
    const started = Date.now()
    const failure = await producer
      .connect()
      .then(() => producer.transaction())
      .then(
        () => null,
        (err: Error & { retriable?: boolean }) => err,
      )
    const ms = Date.now() - started
    await producer.disconnect()
    expect(failure).not.toBeNull()
    expect(failure!.retriable).toBe(false)
    expect(`${failure!.name}: ${failure!.message}`).toMatch(/coordinator/i)
    expect(ms).toBeLessThan(3000)

    const plain = kafka.producer()
    await plain.connect()
    await plain.send({ topic: 'tx', messages: [{ value: 'still served' }] })
    await plain.disconnect()
    expect(broker.logManager.getLog('tx', 0)!.logEndOffset()).toBe(1n)
  })
})
