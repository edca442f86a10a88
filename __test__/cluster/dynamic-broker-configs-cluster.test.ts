/**
 * Dynamic broker configs (KIP-226) in a cluster: a cluster-wide default set with kafka-configs
 * through one broker is kept in etcd and applied at once by every broker (a topic without an
 * override on the other broker takes the new retention), is there for a broker that restarts,
 * and goes from all of them when deleted; a per-broker value applies to its broker only.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'
import { fetchKafkaJars, KafkaTool, kafkaToolOk } from '../helpers/kafka-tools.js'

let cluster: EtcdBrokerCluster | undefined
beforeAll(() => fetchKafkaJars(), 300_000)
afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

describe('dynamic broker configs in a cluster', () => {
  it('cluster-wide defaults reach every broker through etcd, at once and after a restart', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2])
    const c = cluster
    await c.broker(1).createTopic('everywhere', 2, {})
    const logsOf = (id: number) =>
      c
        .broker(id)
        .logManager.allLogs()
        .filter((l) => l.topic === 'everywhere')
    await until("the topic's logs are open", () => logsOf(1).length + logsOf(2).length === 2)
    const alter = (via: number, ...args: string[]) => kafkaToolOk(c.broker(via).port, KafkaTool.CONFIGS, ['--entity-type', 'brokers', '--alter', ...args])
    const retentionOf = (id: number) => c.broker(id).config.logDefaults.retentionMs

    expect(await alter(1, '--entity-default', '--add-config', 'log.retention.ms=1000')).toContain('Completed updating default config for brokers in the cluster.')
    await until('broker 2 applies the cluster-wide default', () => retentionOf(2) === 1000)
    expect(retentionOf(1)).toBe(1000)
    for (const id of [1, 2]) for (const log of logsOf(id)) expect(log.config.retentionMs).toBe(1000)

    // A per-broker value, through that broker: its own only.
    await alter(2, '--entity-name', '2', '--add-config', 'log.cleaner.threads=2')
    expect(c.broker(2).config.cleaner.numThreads).toBe(2)
    expect(c.broker(1).config.cleaner.numThreads).toBe(1)

    await c.stop(2)
    const restarted = await c.start(2)
    expect(restarted.config.logDefaults.retentionMs).toBe(1000)
    expect(restarted.config.cleaner.numThreads).toBe(2)
    expect(restarted.dynamicConfig!.synonyms('log.retention.ms')[0]).toMatchObject({ value: '1000', source: 3 })

    await alter(1, '--entity-default', '--delete-config', 'log.retention.ms')
    await until('broker 2 drops the cluster-wide default', () => retentionOf(2) === 604_800_000)
    expect(retentionOf(1)).toBe(604_800_000)
  }, 300_000)
})
