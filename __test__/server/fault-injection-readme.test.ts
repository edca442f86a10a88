// README.md "Injecting faults in tests": the lines between the two markers are the README's
// snippet, verbatim but for the import path ('ferrolog' there); the last test checks.
// --- README snippet ---
import { FaultInjectionError, startBroker, type Broker } from '../../ts/index.js'
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, expect, it } from 'vitest'

let broker: Broker
beforeAll(async () => {
  broker = await startBroker({ faultInjection: true }) // off unless asked: inject() throws
  await broker.createTopic('orders', 1, {})
})
afterAll(() => broker.stop())

it('retries through a lost leader and a dropped connection, each record once', async () => {
  const kafka = new Kafka({ clientId: 'shop', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING })
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const notLeader = broker.inject({ apiKey: 'Produce', topic: 'orders', error: 'NOT_LEADER_OR_FOLLOWER', times: 2 })
  // Appended, then the connection closes instead of answering: the retry is a duplicate.
  const lost = broker.inject({ apiKey: 'Produce', clientId: 'shop', close: 'after-handling', times: 1 })
  for (const value of ['a', 'b', 'c']) await producer.send({ topic: 'orders', messages: [{ value, partition: 0 }] })
  expect([notLeader.hits, lost.hits]).toEqual([2, 1])

  // A held answer: the request is handled, its answer waits for release().
  const hold = broker.inject({ apiKey: 'Produce', hold: true, times: 1 })
  const sent = producer.send({ topic: 'orders', messages: [{ value: 'd', partition: 0 }] })
  await hold.whenHit()
  hold.release()
  await sent
  broker.inject({ apiKey: ['Produce', 'Fetch'], latencyMs: 50, probability: 0.5, seed: 42 }) // a slow broker, repeatably
  broker.clearInjections() // everything undone, held answers released
  await producer.disconnect()

  const log = broker.logManager.getLog('orders', 0)!
  const values = log.readRecords(0n).map((r) => r.value?.toString())
  expect(values).toEqual(['a', 'b', 'c', 'd']) // nothing lost, nothing twice
})

it('is refused on a broker started without faultInjection', async () => {
  await using plain = await startBroker()
  expect(() => plain.inject({ apiKey: 'Produce', latencyMs: 100 })).toThrow(FaultInjectionError) // code FAULT_INJECTION_DISABLED
})
// --- README snippet ---

import { readFileSync } from 'node:fs'
import { join } from 'node:path'

it('is the snippet the README shows', () => {
  const [, snippet] = readFileSync(__filename, 'utf8').split('// --- README snippet ---\n')
  const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8')
  expect(readme).toContain('```ts\n' + snippet!.replace("from '../../ts/index.js'", "from 'ferrolog'") + '```\n')
})
