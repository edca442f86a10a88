/**
 * Topic changes from real clients all at once: Kafka's Java AdminClient creating and deleting
 * 50 topics in separate requests pipelined on its connection (__test__/interop/java/AdminBurst.java,
 * run from tools/kafka's jars), and 30 kafkajs producers each auto-creating its topic at the same
 * moment. Afterwards ferrolog-topics.json parses and agrees with the data directory, every
 * request was answered, and the broker restarts and serves what was written.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { expectConsistent, storedTopics } from '../helpers/topic-dirs.js'
import { tempDir } from '../helpers/tmp.js'
import { runJava } from '../helpers/java.js'

const KAFKA = join(__dirname, '../../tools/kafka')

let broker: Broker | undefined
const producers: Producer[] = []
afterEach(async () => {
  for (const p of producers.splice(0)) await p.disconnect().catch(() => undefined)
  await broker?.stop()
  broker = undefined
})

beforeAll(() => {
  execFileSync('bash', [join(KAFKA, 'fetch-jars.sh')], { stdio: 'ignore' })
}, 300_000)

describe('topic changes from real clients at once', () => {
  it("Kafka's AdminClient: 50 CreateTopics at once, then 25 DeleteTopics among 50 more CreateTopics", async () => {
    const dataDir = tempDir('ferrolog-admin-burst-')
    broker = await startBroker({ dataDir })
    const r = await runJava(join(__dirname, 'java/AdminBurst.java'), [`127.0.0.1:${broker.port}`, '50'])
    expect(r.stderr).not.toMatch(/Exception/)
    expect(r.status).toBe(0)
    const expected = [...Array.from({ length: 25 }, (_, i) => `burst-${i + 25}`), ...Array.from({ length: 50 }, (_, i) => `second-${i}`)].sort()
    expect(r.stdout.trim().split('\n')).toEqual(expected)
    expect([...storedTopics(dataDir).keys()].sort()).toEqual(expected)
    expectConsistent(dataDir)

    await broker.stop()
    broker = await startBroker({ dataDir })
    expect(
      broker.topics
        .all()
        .map((t) => t.name)
        .sort(),
    ).toEqual(expected)
    for (const name of expected) expect(broker.logManager.getLog(name, 0)).toBeDefined()
    expectConsistent(dataDir)
  }, 180_000)

  it('30 kafkajs producers each auto-creating its topic at the same moment', async () => {
    const dataDir = tempDir('ferrolog-auto-burst-')
    broker = await startBroker({ dataDir, props: { 'num.partitions': '2' } })
    const port = broker.port
    for (let i = 0; i < 30; i++) {
      const kafka = new Kafka({ clientId: `auto-${i}`, brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } })
      producers.push(kafka.producer({ allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner }))
    }
    await Promise.all(producers.map((p) => p.connect()))
    // No retries: every Metadata (which creates the topic) and Produce must be answered the first time.
    const sent = await Promise.allSettled(producers.map((p, i) => p.send({ topic: `auto-${i}`, acks: -1, messages: [{ key: 'k', value: `from producer ${i}` }] })))
    expect(sent.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual([])
    const names = Array.from({ length: 30 }, (_, i) => `auto-${i}`).sort()
    expect([...storedTopics(dataDir).keys()].sort()).toEqual(names)
    expectConsistent(dataDir)

    for (const p of producers.splice(0)) await p.disconnect()
    await broker.stop()
    broker = await startBroker({ dataDir })
    expectConsistent(dataDir)
    for (let i = 0; i < 30; i++) {
      const records = [0, 1].flatMap((p) =>
        broker!.logManager
          .getLog(`auto-${i}`, p)!
          .readRecords(0n)
          .map((r) => r.value!.toString()),
      )
      expect(records).toEqual([`from producer ${i}`])
    }
  }, 120_000)
})
