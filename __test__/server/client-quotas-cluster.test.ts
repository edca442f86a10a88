/**
 * Client quotas in a cluster: stored in the cluster's metadata (one etcd key; here the
 * in-process cluster's store, the same interface), so a quota altered through one broker is
 * described and enforced by the others, and a broker restarted starts with it.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { startCluster, type EmbeddedCluster } from '../../ts/index.js'
import { alterClientQuotasCodec } from '../../ts/protocol/apis/alter-client-quotas.js'
import { describeClientQuotasCodec, MatchType } from '../../ts/protocol/apis/describe-client-quotas.js'
import { until } from '../helpers/etcd-cluster.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

let cluster: EmbeddedCluster | undefined
afterEach(async () => {
  await cluster?.stop()
  cluster = undefined
})

async function describeClient(port: number, clientId: string): Promise<Array<{ key: string; value: number }>> {
  const wire = new KafkaWire(await connectTo(port), 'quota-reader')
  try {
    const r = await wire.send(describeClientQuotasCodec, 1, { components: [{ entityType: 'client-id', matchType: MatchType.EXACT, match: clientId }], strict: true })
    return r.entries?.[0]?.values ?? []
  } finally {
    wire.close()
  }
}

describe('client quotas in a cluster', () => {
  it('are shared by every broker, enforced by each, and kept across a restart', async () => {
    cluster = await startCluster({ brokers: 2 })
    const [first, second] = cluster.brokers
    const wire = new KafkaWire(await connectTo(first!.port), 'quota-admin')
    const entity = [{ entityType: 'client-id', entityName: 'c1' }]
    const altered = await wire.send(alterClientQuotasCodec, 1, {
      entries: [
        { entity, ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] },
        { entity: [{ entityType: 'user', entityName: null }], ops: [{ key: 'consumer_byte_rate', value: 2048, remove: false }] },
      ],
      validateOnly: false,
    })
    wire.close()
    expect(altered.entries.map((e) => e.errorCode)).toEqual([0, 0])
    // The writing broker has it once answered; the other once its watch delivers it.
    expect(await describeClient(first!.port, 'c1')).toEqual([{ key: 'producer_byte_rate', value: 1024 }])
    await until('the other broker describes the quota', async () => (await describeClient(second!.port, 'c1')).length === 1)
    await until('the other broker enforces it', () => second!.quotas.produce.quotaLimit('ANONYMOUS', 'c1') === 1024)
    expect(second!.quotas.fetch.quotaLimit('alice', 'any-client')).toBe(2048)
    expect(second!.quotas.produce.quotaLimit('ANONYMOUS', 'c2')).toBeUndefined()

    const id = second!.config.nodeId
    await cluster.stopBroker(id)
    const restarted = await cluster.startBroker(id)
    expect(restarted.quotas.produce.quotaLimit('ANONYMOUS', 'c1')).toBe(1024)
    expect(await describeClient(restarted.port, 'c1')).toEqual([{ key: 'producer_byte_rate', value: 1024 }])
  }, 120_000)
})
