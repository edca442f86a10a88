/**
 * A broker whose etcd is gone still stops on SIGTERM: the controlled shutdown gives up (nobody can
 * move its leadership), leaving the cluster is bounded (the registration expires with its lease),
 * the logs close cleanly and the data dir is unlocked for the next start.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'

let cluster: EtcdBrokerCluster | undefined
afterEach(async () => {
  await cluster?.close()
  cluster = undefined
}, 120_000)

describe('etcd gone', () => {
  it('a broker stops cleanly without etcd, and starts again on its data dir once etcd is back', { timeout: 120_000 }, async () => {
    cluster = await EtcdBrokerCluster.start([1, 2])
    const b1 = cluster.broker(1)
    await b1.createTopic('gone', 1, {}, false, { replicationFactor: 2, assignments: [[1, 2]] })
    await until('broker 1 leads gone-0', () => b1.replicaManager.getPartition({ topic: 'gone', partition: 0 })?.isLeader)
    const r = await b1.replicaManager.appendRecords({ topic: 'gone', partition: 0 }, buildBatch([{ value: 'kept' }]), 1)
    expect((r as { errorCode: number }).errorCode).toBe(0)

    await cluster.etcd.stop()
    // Without the lease check this waited out the whole controlled-shutdown timeout (30 s).
    const stopped = Promise.race([cluster.stop(1).then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still stopping after 25 s'), 25_000))])
    expect(await stopped).toBe('stopped')

    await cluster.etcd.start()
    const again = await cluster.start(1)
    await until('broker 1 registered again', () => again.metadataCache.aliveBrokers().length === 2, 30_000)
    const log = await until('its log open', () => again.logManager.getLog('gone', 0))
    expect(log.readRecords(0n).map((rec) => rec.value!.toString())).toEqual(['kept'])
  })
})
