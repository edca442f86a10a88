/**
 * broker.rack (`--rack`) reaches clients: Metadata and DescribeCluster list the broker with its
 * rack, as Kafka's brokers do (clients' rack-aware logic and KIP-392 read it there). And the
 * cluster.metadata setting parses etcd endpoints, refusing what is not one.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { describeClusterCodec, EndpointType } from '../../ts/protocol/apis/describe-cluster.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import type { Broker } from '../../ts/server/broker.js'
import { Broker as BrokerClass } from '../../ts/server/broker.js'
import { brokerConfigFrom, ConfigError } from '../../ts/server/config.js'
import { tempDir } from '../helpers/tmp.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

let broker: Broker | undefined
let wire: KafkaWire | undefined

afterEach(async () => {
  wire?.close()
  await broker?.stop()
  broker = wire = undefined
})

describe('broker.rack', () => {
  it('is listed by Metadata and DescribeCluster; none is null', async () => {
    broker = await startBroker({ props: { 'broker.rack': 'rack-a', 'node.id': '7' } })
    wire = new KafkaWire(await connectTo(broker.port), 'rack-test')
    const metadata = await wire.send(metadataCodec, 12, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })
    expect(metadata.brokers).toEqual([{ nodeId: 7, host: '127.0.0.1', port: broker.port, rack: 'rack-a' }])
    expect(metadata.controllerId).toBe(7)
    const cluster = await wire.send(describeClusterCodec, 1, { includeClusterAuthorizedOperations: false, endpointType: EndpointType.BROKER, includeFencedBrokers: false })
    expect(cluster.brokers).toEqual([{ brokerId: 7, host: '127.0.0.1', port: broker.port, rack: 'rack-a', isFenced: false }])
    wire.close()
    await broker.stop()

    broker = await startBroker()
    wire = new KafkaWire(await connectTo(broker.port), 'rack-test')
    const none = await wire.send(metadataCodec, 12, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })
    expect(none.brokers[0].rack).toBeNull()
  })
})

describe('cluster.metadata', () => {
  it('parses etcd endpoints and refuses anything else', () => {
    expect(brokerConfigFrom({}).clusterMetadata).toEqual([])
    expect(brokerConfigFrom({ 'cluster.metadata': 'etcd://127.0.0.1:2379,localhost:2479' }).clusterMetadata).toEqual(['http://127.0.0.1:2379', 'http://localhost:2479'])
    for (const bad of ['etcd://host', 'http://h:1/x', 'etcd://h:0', ',']) expect(() => brokerConfigFrom({ 'cluster.metadata': bad })).toThrow(ConfigError)
  })

  it('a start whose etcd cannot be reached fails (never runs alone when asked to join) and leaves the data dir free', async () => {
    const dataDir = tempDir('ferrolog-cluster-')
    const config = brokerConfigFrom({ listeners: '127.0.0.1:0', 'log.dirs': dataDir, 'cluster.metadata': 'etcd://127.0.0.1:1' })
    await expect(BrokerClass.start(config)).rejects.toThrow()
    broker = await BrokerClass.start(brokerConfigFrom({ listeners: '127.0.0.1:0', 'log.dirs': dataDir }))
    expect(broker.cluster).toBeNull()
  }, 30_000)
})
