/**
 * Issue 26 item 1: listeners as Kafka's. `listeners` with custom names mapped by
 * `listener.security.protocol.map`, `advertised.listeners`, the inter-broker listener, one
 * server socket per listener (port 0 each, the bound ports reported), and Metadata,
 * DescribeCluster and FindCoordinator answering with the endpoints of the listener the client
 * came in on: the same scenario against Apache Kafka 4.4 in the same test. Bad settings refused
 * at start with Kafka's messages.
 */
import { describeClusterCodec } from '../../ts/protocol/apis/describe-cluster.js'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom, ConfigError } from '../../ts/server/config.js'
import { startBroker } from '../helpers/broker.js'
import { freePorts } from '../helpers/etcd.js'
import { EtcdBrokerCluster } from '../helpers/etcd-cluster.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

describe('listener settings', () => {
  it('default to one PLAINTEXT listener; a bare host:port (--listen) is one too', () => {
    expect(brokerConfigFrom({}).listeners).toEqual([{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9092 }])
    const c = brokerConfigFrom({ listeners: '127.0.0.1:0' })
    expect(c.listeners).toEqual([{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 0 }])
    expect([c.host, c.port, c.advertisedHost, c.advertisedPort]).toEqual(['127.0.0.1', 0, '127.0.0.1', 0])
  })

  it('read names (upper-cased) and hosts as Kafka does, and register the inter-broker listener', () => {
    const c = brokerConfigFrom({
      listeners: 'internal://127.0.0.1:9093,EXTERNAL://[::1]:9094',
      'advertised.listeners': 'INTERNAL://broker1.local:19093,EXTERNAL://public.example:9094',
      'listener.security.protocol.map': 'INTERNAL:PLAINTEXT,EXTERNAL:SSL',
      'inter.broker.listener.name': 'internal',
    })
    expect(c.listeners).toEqual([
      { listenerName: 'INTERNAL', host: '127.0.0.1', port: 9093 },
      { listenerName: 'EXTERNAL', host: '::1', port: 9094 },
    ])
    expect([c.advertisedHost, c.advertisedPort]).toEqual(['broker1.local', 19093])
    const ssl = brokerConfigFrom({ listeners: 'PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093', 'security.inter.broker.protocol': 'SSL' })
    expect([ssl.advertisedHost, ssl.advertisedPort]).toEqual(['127.0.0.1', 9093])
  })

  const refused: Array<[string, Record<string, string>, RegExp]> = [
    ['a duplicate name', { listeners: 'PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093' }, /Each listener must have a different name/],
    ['a duplicate port', { listeners: 'PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9092' }, /Each listener must have a different port/],
    ['a name without a protocol', { listeners: 'PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093' }, /No security protocol defined for listener INTERNAL/],
    ['an unknown protocol', { listeners: 'INTERNAL://127.0.0.1:9093', 'listener.security.protocol.map': 'INTERNAL:TLS' }, /unknown security protocol TLS/],
    ['an unparsable listener', { listeners: 'PLAINTEXT://127.0.0.1' }, /unable to parse PLAINTEXT:\/\/127\.0\.0\.1/],
    [
      'an advertised listener not in listeners',
      { listeners: 'PLAINTEXT://127.0.0.1:9092', 'advertised.listeners': 'PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093' },
      /advertised.listeners listener names must be equal to or a subset of the ones defined in listeners/,
    ],
    ['an advertised 0.0.0.0', { listeners: 'PLAINTEXT://0.0.0.0:9092' }, /cannot use the nonroutable meta-address 0\.0\.0\.0/],
    [
      'both inter-broker settings',
      { listeners: 'PLAINTEXT://127.0.0.1:9092', 'inter.broker.listener.name': 'PLAINTEXT', 'security.inter.broker.protocol': 'PLAINTEXT' },
      /Only one of inter.broker.listener.name and security.inter.broker.protocol should be set/,
    ],
    [
      'an inter-broker listener not advertised',
      { listeners: 'PLAINTEXT://127.0.0.1:9092', 'security.inter.broker.protocol': 'SSL' },
      /inter.broker.listener.name must be a listener name defined in advertised.listeners/,
    ],
    [
      'an inter-broker listener without a protocol',
      { listeners: 'PLAINTEXT://127.0.0.1:9092', 'inter.broker.listener.name': 'REPLICATION' },
      /REPLICATION defined in inter.broker.listener.name not found/,
    ],
  ]
  it.each(refused)('refuse %s with a ConfigError', (_, props, message) => {
    let error: unknown
    try {
      brokerConfigFrom(props)
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(message)
  })

  it('allow one IPv4 and one IPv6 listener on the same port, as Kafka does', () => {
    expect(brokerConfigFrom({ listeners: 'PLAINTEXT://127.0.0.1:9092,SSL://[::1]:9092' }).listeners).toHaveLength(2)
  })
})

/** The ports Metadata, DescribeCluster and FindCoordinator give a client that connected to `port`. */
async function seenThrough(port: number): Promise<{ metadata: number[]; describeCluster: number[]; coordinator: number }> {
  const wire = new KafkaWire(await connectTo(port), 'listeners-test')
  try {
    const metadata = await wire.send(metadataCodec, 12, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })
    const cluster = await wire.send(describeClusterCodec, 1, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: false })
    // The first FindCoordinator creates __consumer_offsets (Kafka, a cluster): retried until it has a leader.
    let coordinator = -1
    for (let i = 0; i < 100 && coordinator < 0; i++) {
      const found = await wire.send(findCoordinatorCodec, 4, { key: '', keyType: 0, coordinatorKeys: ['listeners-group'] })
      const c = found.coordinators[0]
      if (c.errorCode === 0) coordinator = c.port
      else await new Promise((r) => setTimeout(r, 200))
    }
    return { metadata: metadata.brokers.map((b) => b.port), describeCluster: cluster.brokers.map((b) => b.port), coordinator }
  } finally {
    wire.close()
  }
}

describe('a broker with two listeners', () => {
  beforeAll(() => fetchKafkaJars(), 300_000)

  it('answers each client with the endpoints of the listener it came in on, as Kafka 4.4 does', async () => {
    const props = {
      listeners: 'PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT',
      'inter.broker.listener.name': 'INTERNAL',
    }
    broker = await startBroker({ props })
    const plain = broker.listenerPort('PLAINTEXT')
    const internal = broker.listenerPort('internal')
    expect(plain).toBeGreaterThan(0)
    expect(internal).toBeGreaterThan(0)
    expect(plain).not.toBe(internal)
    expect(broker.listeners.map((l) => [l.listenerName, l.securityProtocol, l.port])).toEqual([
      ['PLAINTEXT', 'PLAINTEXT', plain],
      ['INTERNAL', 'PLAINTEXT', internal],
    ])
    expect(broker.port).toBe(plain)
    const ours = [await seenThrough(plain), await seenThrough(internal)]
    expect(ours).toEqual([
      { metadata: [plain], describeCluster: [plain], coordinator: plain },
      { metadata: [internal], describeCluster: [internal], coordinator: internal },
    ])

    // Apache Kafka 4.4, the same two listeners.
    kafkaDir = tempDir('kafka-listeners-')
    const [kPlain, kInternal, kController] = await freePorts(3)
    await runKafkaBroker(kafkaDir, [
      '--port',
      String(kPlain),
      '--controller-port',
      String(kController),
      '--set',
      `listeners=PLAINTEXT://127.0.0.1:${kPlain},INTERNAL://127.0.0.1:${kInternal},CONTROLLER://127.0.0.1:${kController}`,
      '--set',
      `advertised.listeners=PLAINTEXT://127.0.0.1:${kPlain},INTERNAL://127.0.0.1:${kInternal}`,
      '--set',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT',
      '--set',
      'inter.broker.listener.name=INTERNAL',
    ])
    const theirs = [await seenThrough(kPlain), await seenThrough(kInternal)]
    expect(theirs).toEqual([
      { metadata: [kPlain], describeCluster: [kPlain], coordinator: kPlain },
      { metadata: [kInternal], describeCluster: [kInternal], coordinator: kInternal },
    ])
  }, 180_000)
})

describe('a cluster of brokers with two listeners', () => {
  it('registers every listener in etcd: a client of each listener is told every broker on that listener', async () => {
    const cluster = await EtcdBrokerCluster.start([1, 2], {
      listeners: 'PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT',
      'inter.broker.listener.name': 'INTERNAL',
      'offsets.topic.replication.factor': '2',
    })
    try {
      const port = (id: number, name: string) => cluster.broker(id).listenerPort(name)
      // Each broker registers its inter-broker listener as its address for the others.
      expect(
        cluster
          .broker(1)
          .metadataCache.aliveBrokers()
          .map((b) => [b.id, b.port]),
      ).toEqual([
        [1, port(1, 'INTERNAL')],
        [2, port(2, 'INTERNAL')],
      ])
      for (const id of [1, 2]) {
        const plain = await seenThrough(port(id, 'PLAINTEXT'))
        expect(plain.metadata).toEqual([port(1, 'PLAINTEXT'), port(2, 'PLAINTEXT')])
        expect(plain.describeCluster).toEqual(plain.metadata)
        expect(plain.metadata).toContain(plain.coordinator)
        const internal = await seenThrough(port(id, 'INTERNAL'))
        expect(internal.metadata).toEqual([port(1, 'INTERNAL'), port(2, 'INTERNAL')])
        expect(internal.describeCluster).toEqual(internal.metadata)
        expect(internal.metadata).toContain(internal.coordinator)
      }
    } finally {
      await cluster.close()
    }
  }, 120_000)
})
