import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ClusterMetadata } from '../../ts/cluster/index.js'
import { startEtcd, type EtcdServer } from '../helpers/etcd.js'
import { until } from '../helpers/etcd-cluster.js'

// dist/ must be built (`node scripts/build.mjs ts`; npm test's pretest does it).
const MEMBER = join(__dirname, '../helpers/cluster-member.mjs')
const TTL_MS = 1000

let etcd: EtcdServer
let inProcess: ClusterMetadata[]
let children: ChildProcess[]

beforeEach(async () => {
  etcd = await startEtcd()
  inProcess = []
  children = []
})

afterEach(async () => {
  for (const c of children)
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGCONT')
      c.kill('SIGKILL')
    }
  await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)))
  await Promise.all(inProcess.map((b) => b.close().catch(() => {})))
  await etcd.close()
})

/** Spawns a member; `lines` collects its stdout lines; resolves once it has registered. */
async function member(id: number): Promise<{ child: ChildProcess; lines: string[] }> {
  const child = spawn(process.execPath, [MEMBER, etcd.clusterUrl, 'p', String(id), String(TTL_MS)], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  const lines: string[] = []
  let err = ''
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  child.stdout!.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean)))
  await until(`member ${id} registered (${err})`, () => lines.some((l) => l.startsWith('registered')), 15_000)
  return { child, lines }
}

describe('a cluster member in another process', () => {
  it('SIGKILLed: its lease expires and its partitions get new leaders within the TTL and a small margin', async () => {
    const b1 = await ClusterMetadata.start({ cluster: etcd.clusterUrl, clusterId: 'p', brokerId: 1, host: '127.0.0.1', port: 9001, sessionTimeoutMs: TTL_MS })
    inProcess.push(b1)
    const b2 = await ClusterMetadata.start({ cluster: etcd.clusterUrl, clusterId: 'p', brokerId: 2, host: '127.0.0.1', port: 9002, sessionTimeoutMs: TTL_MS })
    inProcess.push(b2)
    const m3 = await member(3)
    await until('broker 3 seen', () => b1.cache.isAlive(3))
    const { revision } = await b1.admin.createTopic({
      name: 'k',
      assignment: [
        [3, 1, 2],
        [3, 2, 1],
      ],
    })
    await b1.cache.waitForRevision(revision)

    const t0 = Date.now()
    m3.child.kill('SIGKILL')
    await until('new leaders', () => b1.cache.partition('k', 0)!.leader === 1 && b1.cache.partition('k', 1)!.leader === 2, TTL_MS + 5000)
    const failoverMs = Date.now() - t0
    console.log(`failover after SIGKILL: ${failoverMs} ms (lease TTL ${TTL_MS} ms)`)
    expect(failoverMs).toBeLessThan(TTL_MS + 2000)
    expect(b1.cache.partition('k', 0)).toEqual({ replicas: [3, 1, 2], isr: [1, 2], leader: 1, leaderEpoch: 1, partitionEpoch: 1 })
    expect(b2.cache.partition('k', 1)).toEqual({ replicas: [3, 2, 1], isr: [2, 1], leader: 2, leaderEpoch: 1, partitionEpoch: 1 })
  })

  it('SIGSTOPped for longer than its lease: fenced when it resumes, its leadership gone, then registered again', async () => {
    const b1 = await ClusterMetadata.start({ cluster: etcd.clusterUrl, clusterId: 'p', brokerId: 1, host: '127.0.0.1', port: 9001, sessionTimeoutMs: TTL_MS })
    inProcess.push(b1)
    const m2 = await member(2)
    await until('broker 2 seen', () => b1.cache.isAlive(2))
    const { revision } = await b1.admin.createTopic({ name: 's', assignment: [[2, 1]] })
    await b1.cache.waitForRevision(revision)
    const epoch = b1.cache.broker(2)!.epoch

    m2.child.kill('SIGSTOP')
    await until('leadership moved', () => b1.cache.partition('s', 0)!.leader === 1, TTL_MS + 5000)
    const before = m2.lines.length
    m2.child.kill('SIGCONT')
    await until('fenced, then registered', () => {
      const after = m2.lines.slice(before)
      return after[0] === 'fenced' && after.some((l) => l.startsWith('registered'))
    })
    await until('broker 2 back at a new epoch', () => (b1.cache.broker(2)?.epoch ?? 0n) > epoch)
    // it came back as a follower: out of the ISR, the leader stays
    expect(b1.cache.partition('s', 0)).toEqual({ replicas: [2, 1], isr: [1], leader: 1, leaderEpoch: 1, partitionEpoch: 1 })
  })
})
