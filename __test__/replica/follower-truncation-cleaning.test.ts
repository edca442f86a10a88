/**
 * A follower's truncation while its log cleaner is mid-round (issue #18; Kafka's
 * LogManager.truncateTo pauses cleaning): a former leader holding records its successor never
 * got has a real cleaning round of that log under way when it learns it follows the new leader;
 * the diverging epoch truncates it, which aborts the round (its end is not checkpointed), and
 * cleaning resumes after. The log ends consistent with the leader's (the divergent records gone,
 * offsets increasing, the same latest value per key), and a later round cleans it with a
 * checkpoint within the log. Brokers in this process with the harness as the cluster metadata
 * (helpers/replication.ts); cleaner threads 0, so the test runs each round itself.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import type { BackendName } from '../../ts/storage/backends.js'
import type { Log } from '../../ts/storage/log.js'
import type { LogCleanRequest, LogCleanResult } from '../../ts/storage/types.js'
import { registration, ReplicatedCluster, waitUntil } from '../helpers/replication.js'
import { latestValues } from '../helpers/compacted-log.js'

const TOPIC = 'table'
const KEY = `${TOPIC}-0`
let cluster: ReplicatedCluster | undefined
const clients: NetworkClient[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close()
  await cluster?.stop()
  cluster = undefined
})

async function produceKeyed(port: number, batches: number, tag: string): Promise<void> {
  const client = new NetworkClient({ bootstrapServers: `127.0.0.1:${port}`, requestTimeoutMs: 10_000 })
  clients.push(client)
  for (let b = 0; b < batches; b++) {
    const records = Array.from({ length: 5 }, (_, i) => ({ key: `k${(b + i) % 7}`, value: `${tag}-${b}-${i}-${'x'.repeat(40)}` }))
    await produce(client, TOPIC, records, { acks: 1, partition: 0, allowAutoTopicCreation: false })
  }
}

const logOf = (id: number): Log => cluster!.broker(id).logManager.getLog(TOPIC, 0)!

function caughtUp(leader: number, followers: number[]): () => boolean {
  return () => {
    const l = logOf(leader)
    return followers.every((f) => logOf(f).logEndOffset() === l.logEndOffset() && logOf(f).highWatermark() === l.highWatermark() && l.highWatermark() === l.logEndOffset())
  }
}

describe.each(['native', 'js'] as BackendName[])('follower truncation during a cleaning round, %s engine', (backend) => {
  it('the diverging-epoch truncation aborts the round under way, the log ends as the leader’s, cleaning resumes', async () => {
    cluster = await ReplicatedCluster.start([1, 2, 3], { backend, props: { 'log.cleaner.threads': '0' } })
    await cluster.createTopic(TOPIC, 1, { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'min.cleanable.dirty.ratio': '0.01' })
    await cluster.apply(TOPIC, 0, registration(1, [1, 2, 3], 0))
    await produceKeyed(cluster.broker(1).port, 30, 'committed')
    await waitUntil('replicated', caughtUp(1, [2, 3]))

    // Brokers 2 and 3 move to epoch 1 (leader 2); broker 1, a stale leader, takes records no one else gets.
    const epoch1 = registration(2, [1, 2, 3], 1, 1, [2, 3])
    await cluster.apply(TOPIC, 0, epoch1, [2, 3])
    await produceKeyed(cluster.broker(1).port, 4, 'divergent')
    await produceKeyed(cluster.broker(2).port, 6, 'epoch1')
    await waitUntil('broker 3 follows broker 2', caughtUp(2, [3]))

    // A real round on broker 1's log, held open (after the engine's work) until a truncation aborts it.
    const log1 = logOf(1)
    const cleaner = cluster.broker(1).logManager.cleaner!
    const manager = cleaner.manager
    let roundBegan = false
    let sawAbort = false
    let roundResult: LogCleanResult | null = null
    const clean = log1.clean.bind(log1)
    log1.clean = async (request: LogCleanRequest) => {
      roundBegan = true
      const result = await clean(request)
      roundResult = result
      for (let i = 0; i < 1000 && manager.cleaningState(KEY)?.kind !== 'aborted'; i++) await new Promise((r) => setTimeout(r, 20))
      sawAbort = manager.cleaningState(KEY)?.kind === 'aborted'
      return result
    }
    const round = cleaner.cleanFilthiestLog(0)
    await waitUntil('the round began', () => roundBegan)
    expect(manager.cleaningState(KEY)).toEqual({ kind: 'in-progress' })

    // Broker 1 learns it follows broker 2: the diverging epoch truncates its log under the round.
    await cluster.apply(TOPIC, 0, epoch1, [1])
    expect(await round).toBe(true)
    log1.clean = clean
    expect(sawAbort).toBe(true)
    expect(roundResult!.aborted).toBe(false) // the engine's round did finish; its end does not count
    await waitUntil('broker 1 caught up with broker 2', caughtUp(2, [1, 3]))
    // Not checkpointed by the aborted round, and no longer paused.
    expect(manager.allCleanerCheckpoints().get(KEY)).toBeUndefined()
    expect(manager.cleaningState(KEY)).toBeUndefined()
    const leaderLatest = latestValues(logOf(2))
    const latest1 = latestValues(log1)
    expect(latest1).toEqual(leaderLatest)
    expect([...latest1.values()].some((v) => v.startsWith('divergent'))).toBe(false)

    // Cleaning resumed: the next round cleans it, checkpointed within the log, values kept.
    expect(await cleaner.cleanFilthiestLog(0)).toBe(true)
    const checkpoint = manager.allCleanerCheckpoints().get(KEY)!
    expect(checkpoint).toBeGreaterThan(0n)
    expect(checkpoint).toBeLessThanOrEqual(log1.logEndOffset())
    expect(latestValues(log1)).toEqual(leaderLatest)
    // And replication goes on over the cleaned log.
    await produceKeyed(cluster.broker(2).port, 3, 'after')
    await waitUntil('broker 1 follows on', caughtUp(2, [1, 3]))
    expect(latestValues(log1)).toEqual(latestValues(logOf(2)))
  }, 60_000)
})
