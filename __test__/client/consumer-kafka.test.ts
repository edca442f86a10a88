/**
 * The Consumer against a real Apache Kafka broker (tools/kafka/run-broker.sh, one for the file):
 * the same scenarios as against ferrolog (consumer-scenarios.ts): a group of three joining and
 * leaving over 12 partitions reads every record exactly once with its offsets committed to the
 * log ends, with each assignor; seek; pause/resume; a pattern subscription picking up a topic
 * created later; READ_COMMITTED over transactions written by Kafka's Java producer (aborted ones
 * interleaved with committed ones) yields exactly the committed records.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { Consumer } from '../../ts/client/consumer.js'
import { createTopic, groupJoinLeaveScenario, pauseResumeScenario, pollTimeoutScenario, regexScenario, seekScenario, staticMembershipScenario, unsubscribeScenario } from './consumer-scenarios.js'
import { runJava } from '../helpers/java.js'

let dir: string
let bootstrap: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-consumer-'))
  bootstrap = `127.0.0.1:${kafkaBrokerPort(await runKafkaBroker(dir))}`
}, 150_000)

afterAll(() => {
  if (!dir) return
  stopKafkaBroker(dir)
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

describe('Consumer against Apache Kafka', () => {
  it('a group of 3 over 12 partitions, members joining and leaving: every record exactly once, commits at the log ends', async () => {
    const { rebalances, perMember } = await groupJoinLeaveScenario(bootstrap, 'group-join-leave', 24_000)
    expect(rebalances).toBeGreaterThanOrEqual(4)
    expect(perMember.every((n) => n > 0)).toBe(true)
  }, 150_000)

  it('the same with the roundrobin assignor', async () => {
    await groupJoinLeaveScenario(bootstrap, 'group-roundrobin', 12_000, { 'partition.assignment.strategy': 'roundrobin' })
  }, 150_000)

  it('seek: back, forward, and to an offset given to assign', async () => {
    await seekScenario(bootstrap, 'seek-topic')
  }, 60_000)

  it('pause returns nothing of a partition until resume', async () => {
    await pauseResumeScenario(bootstrap, 'pause-topic')
  }, 60_000)

  it('a RegExp subscription picks up a topic created later', async () => {
    await regexScenario(bootstrap, 'regex')
  }, 60_000)

  it('static membership: close without LeaveGroup, a restart gets its partitions back with no rebalance, a duplicate instance fences the first', async () => {
    await staticMembershipScenario(bootstrap, 'static-topic')
  }, 90_000)

  it('max.poll.interval.ms: a member stalled in eachBatch leaves the group, the other takes its partitions, its commit fails with ILLEGAL_GENERATION, its next poll rejoins; no record lost', async () => {
    await pollTimeoutScenario(bootstrap, 'poll-timeout')
  }, 150_000)

  it('unsubscribe sends LeaveGroup: the other member gets the partitions long before the session timeout', async () => {
    await unsubscribeScenario(bootstrap, 'unsubscribe-topic')
  }, 90_000)

  it('unsubscribe of a static member sends no LeaveGroup: it stays in the group', async () => {
    await unsubscribeScenario(bootstrap, 'unsubscribe-static', true)
  }, 90_000)

  it('READ_COMMITTED yields exactly the committed records of interleaved transactions; READ_UNCOMMITTED all of them', async () => {
    await createTopic(bootstrap, 'tx-topic', 1)
    const out = await runJava(join(__dirname, 'java/TxProducer.java'), [bootstrap, 'tx-topic', '10'])
    expect(out.stdout.trim(), out.stderr).toBe('done')
    const read = async (isolation: string, want: number) => {
      const c = new Consumer({ bootstrapServers: bootstrap, 'isolation.level': isolation, 'auto.offset.reset': 'earliest', 'fetch.max.wait.ms': 100, 'max.partition.fetch.bytes': 2048 })
      const values: string[] = []
      try {
        c.assign([{ topic: 'tx-topic', partition: 0 }])
        // Past the end: the last markers are read too (the position reaches the log end).
        for (let i = 0; i < 300 && (values.length < want || c.position('tx-topic', 0)! < 220n); i++) for (const b of await c.poll(100)) values.push(...b.records.map((r) => r.value!.toString()))
      } finally {
        await c.close()
      }
      return values
    }
    const committed = await read('read_committed', 150)
    const expected: string[] = []
    for (let t = 0; t < 10; t++) for (let i = 0; i < 10; i++) expected.push(`u${t}-${i}`)
    for (let t = 0; t < 10; t += 2) for (let i = 0; i < 10; i++) expected.push(`t${t}-${i}`)
    expect(committed.slice().sort()).toEqual(expected.sort())
    expect(committed.length).toBe(150)
    const all = await read('read_uncommitted', 200)
    expect(all.length).toBe(200)
  }, 150_000)
})
