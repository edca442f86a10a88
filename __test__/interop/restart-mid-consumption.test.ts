/**
 * A broker restart in the middle of consumption (kafkajs, the real client): an idempotent
 * producer keeps sending and a consumer group keeps reading while the broker is stopped and
 * started again on the same address and data dir. Afterwards the log holds every acknowledged
 * message exactly once (nothing lost, nothing duplicated by the producer's retries) and the
 * group has seen every one of them.
 */
import { createServer } from 'node:net'
import { Kafka, logLevel, Partitioners, type Consumer, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'restarts'
const PARTITIONS = 3
const PROPS = { 'group.initial.rebalance.delay.ms': '0' }

let broker: Broker | undefined
const clients: Array<Producer | Consumer> = []
afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined)
  await broker?.stop()
  broker = undefined
})

/** A port that was free a moment ago, so that the restarted broker listens where clients look. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('a broker restart in the middle of consumption', () => {
  it('loses nothing and duplicates nothing in the log', async () => {
    const dataDir = tempDir()
    const port = await freePort()
    const props = { ...PROPS, listeners: `127.0.0.1:${port}` }
    broker = await startBroker({ dataDir, props })
    await broker.createTopic(TOPIC, PARTITIONS, {})
    const kafka = new Kafka({
      clientId: 'restart-test',
      brokers: [`127.0.0.1:${port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 500 },
    })
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
    clients.push(producer)
    await producer.connect()
    const consumer = kafka.consumer({ groupId: 'restart-group', sessionTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 })
    clients.push(consumer)
    await consumer.connect()
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
    const seen = new Set<string>()
    await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value!.toString()) })

    const acked: string[] = []
    let restart: Promise<void> | undefined
    const send = async (from: number, count: number, beforeBatch: (i: number) => void = () => undefined) => {
      for (let i = from; i < from + count; i += 10) {
        beforeBatch(i)
        const messages = Array.from({ length: 10 }, (_, j) => ({ key: `k${(i + j) % 7}`, value: `m-${i + j}` }))
        await producer.send({ topic: TOPIC, messages, acks: -1 })
        acked.push(...messages.map((m) => m.value))
      }
    }
    await send(0, 150)
    await waitFor('the group to read the first messages', () => seen.size >= 50)
    // The broker stops and starts again while the next sends are in flight (they retry) and the
    // consumer is polling.
    await send(150, 150, (i) => {
      if (i !== 200) return
      const stopping = broker!
      broker = undefined
      restart = stopping.stop().then(async () => {
        broker = await startBroker({ dataDir, props })
      })
    })
    await restart
    await waitFor('the group to read every acknowledged message', () => acked.every((v) => seen.has(v)))
    expect(restart).toBeDefined()
    expect(acked).toHaveLength(300)

    // The log: every acknowledged message exactly once, nothing else.
    const inLog: string[] = []
    if (!broker) throw new Error('the broker did not come back')
    for (let p = 0; p < PARTITIONS; p++) {
      const log = broker.logManager.getLog(TOPIC, p)!
      let next = log.logStartOffset()
      while (next < log.logEndOffset()) {
        const records = log.readRecords(next, { maxBytes: 1 << 20, isolation: 'LOG_END' })
        expect(records.length).toBeGreaterThan(0)
        inLog.push(...records.map((r) => r.value!.toString()))
        next = records.at(-1)!.offset + 1n
      }
    }
    expect(inLog.length).toBe(new Set(inLog).size)
    expect([...inLog].sort()).toEqual([...acked].sort())
  }, 120_000)
})
