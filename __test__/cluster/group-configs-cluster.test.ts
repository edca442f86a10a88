/**
 * Group configs in a cluster (issue 24 item 5): kept in etcd, so a config set through one broker
 * is described by every other at once (as Kafka's metadata log gives every broker), refused
 * changes leave nothing behind, and a restarted broker still sees them (none are in its data dir).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { ConfigResourceType, describeConfigsCodec } from '../../ts/protocol/apis/describe-configs.js'
import { ConfigOperation, incrementalAlterConfigsCodec } from '../../ts/protocol/apis/incremental-alter-configs.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { EtcdBrokerCluster } from '../helpers/etcd-cluster.js'

let cluster: EtcdBrokerCluster | undefined
afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

async function withClient<T>(port: number, f: (c: NetworkClient) => Promise<T>): Promise<T> {
  const client = await NetworkClient.connect(`127.0.0.1:${port}`)
  try {
    return await f(client)
  } finally {
    await client.close()
  }
}

const set = (name: string, value: string) => ({ name, configOperation: ConfigOperation.SET, value })
const alter = (port: number, configs: ReturnType<typeof set>[]) =>
  withClient(
    port,
    async (c) => (await c.send(incrementalAlterConfigsCodec, 1, { resources: [{ resourceType: ConfigResourceType.GROUP, resourceName: 'shared', configs }], validateOnly: false })).responses[0],
  )
const sessionTimeout = (port: number) =>
  withClient(port, async (c) => {
    const r = await c.send(describeConfigsCodec, 4, {
      resources: [{ resourceType: ConfigResourceType.GROUP, resourceName: 'shared', configurationKeys: ['consumer.session.timeout.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    })
    const entry = r.results[0].configs[0]
    return { value: entry.value, source: entry.configSource }
  })

describe('group configs in a cluster (etcd)', () => {
  it('set through one broker, seen by the other, kept over a restart', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2])
    const [b1, b2] = [cluster.broker(1), cluster.broker(2)]
    expect(await sessionTimeout(b2.port)).toEqual({ value: '45000', source: 5 })
    expect(await alter(b1.port, [set('consumer.session.timeout.ms', '52000')])).toMatchObject({ errorCode: ErrorCode.NONE })
    expect(await sessionTimeout(b2.port)).toEqual({ value: '52000', source: 8 })
    const refused = await alter(b2.port, [set('consumer.session.timeout.ms', '59000'), set('consumer.heartbeat.interval.ms', '1')])
    expect(refused).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.' })
    expect(await sessionTimeout(b1.port)).toEqual({ value: '52000', source: 8 })
    await cluster.stop(2)
    const again = await cluster.start(2)
    expect(await sessionTimeout(again.port)).toEqual({ value: '52000', source: 8 })
  }, 120_000)
})
