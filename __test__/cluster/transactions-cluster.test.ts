/**
 * Transactions in cluster mode on a real etcd: `__transaction_state` is created replicated on the
 * first FindCoordinator for a transactional id; the coordinator is the leader of its partition;
 * the markers of partitions led by other brokers go there by WriteTxnMarkers (and replicate);
 * when the coordinator's broker stops, another replica of the id's partition takes over with
 * the transactional ids it loaded, and a new producer of the id continues. The log side
 * replicates with the markers (every replica's LSO and .txnindex), and a READ_COMMITTED consumer
 * of the cluster reads the committed records only.
 *
 * Transaction version 2 (KIP-890 part 2) in the cluster: Kafka's Java producer adds no
 * partitions itself; each partition leader asks the coordinator on another broker to add its
 * partition (AddPartitionsToTxn v5 between brokers), for the Produce and for the TxnOffsetCommit.
 */
import { join } from 'node:path'
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { fetchKafkaJars, runKafkaClass } from '../helpers/kafka-tools.js'
import { Consumer } from '../../ts/client/consumer.js'
import { Producer as FerrologProducer } from '../../ts/client/producer.js'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeEndTransactionMarker } from '../../ts/protocol/control-record.js'
import type { Broker } from '../../ts/server/broker.js'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'
import { runJava } from '../helpers/java.js'

let cluster: EtcdBrokerCluster
const clients: Array<Admin | Producer> = []

afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined)
  await cluster?.close()
})

function kafka(port: number): Kafka {
  return new Kafka({ clientId: 'txn-cluster-test', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } })
}

/** Values and markers of a partition's log on a broker holding it. */
function logContents(b: Broker, topic: string, partition: number): string[] {
  const log = b.logManager.getLog(topic, partition)
  if (!log) return []
  return log.readBatches(log.logStartOffset(), { isolation: 'LOG_END', maxBytes: 10 * 1024 * 1024 }).flatMap((batch) => {
    if (!batch.isControl) return batch.records.map((r) => r.value!.toString())
    const marker = decodeEndTransactionMarker(batch.records[0].key, batch.records[0].value)
    return [marker?.type ?? '?']
  })
}

describe('transactions in cluster mode', () => {
  it("markers reach partitions led by other brokers; the coordinator moves with the id's partition of __transaction_state", async () => {
    cluster = await EtcdBrokerCluster.start([1, 2, 3], { 'min.insync.replicas': '2', 'default.replication.factor': '3' })
    const b1 = cluster.broker(1)
    const a = kafka(b1.port).admin()
    clients.push(a)
    await a.connect()
    await a.createTopics({ topics: [{ topic: 'tx', numPartitions: 3, replicationFactor: 3 }] })
    const leaderOf = (p: number) => b1.metadataCache.partitionRegistration('tx', p)?.leader ?? -1
    await until('every partition of tx led', () => [0, 1, 2].every((p) => leaderOf(p) >= 0), 20_000)
    const leaders = [0, 1, 2].map(leaderOf)
    expect(new Set(leaders).size).toBeGreaterThan(1)

    const producer = kafka(b1.port).producer({ transactionalId: 'cluster-tx', idempotent: true, maxInFlightRequests: 1 })
    clients.push(producer)
    await producer.connect()
    const t = await producer.transaction()
    await t.send({ topic: 'tx', acks: -1, messages: [0, 1, 2].map((partition) => ({ partition, value: `v${partition}` })) })
    await t.commit()

    // The id's partition of the 50 (Kafka's Utils.abs("cluster-tx".hashCode()) % 50).
    const partition = partitionFor('cluster-tx', 50)
    const state = b1.metadataCache.partitionRegistration('__transaction_state', partition)!
    expect([...state.replicas].sort()).toEqual([1, 2, 3])
    const coordinator = state.leader
    for (const p of [0, 1, 2]) {
      const leader = cluster.broker(leaders[p])
      await until(`the COMMIT marker in tx-${p}`, () => logContents(leader, 'tx', p).join() === `v${p},COMMIT`, 20_000)
    }
    // Replicated like any records: every replica holds the marker.
    for (const id of [1, 2, 3]) await until(`tx-0 on broker ${id}`, () => logContents(cluster.broker(id), 'tx', 0).join() === 'v0,COMMIT', 20_000)

    // The coordinator's broker stops: another replica of the id's partition coordinates.
    await producer.disconnect()
    await cluster.stop(coordinator)
    const other = [...cluster.brokers.values()][0]
    await until(
      'a new transaction coordinator',
      () => {
        const r = other.metadataCache.partitionRegistration('__transaction_state', partition)!
        return r.leader !== coordinator && r.leader !== -1 && cluster.brokers.get(r.leader)?.transactionCoordinator.stateManager.statusError('cluster-tx') === 0
      },
      30_000,
    )
    const next = cluster.brokers.get(other.metadataCache.partitionRegistration('__transaction_state', partition)!.leader)!
    expect(next.transactionCoordinator.describeTransactions(['cluster-tx'])[0]).toMatchObject({ errorCode: 0, transactionState: 'CompleteCommit' })

    const again = kafka(other.port).producer({ transactionalId: 'cluster-tx', idempotent: true, maxInFlightRequests: 1 })
    clients.push(again)
    await again.connect()
    const t2 = await again.transaction()
    await t2.send({ topic: 'tx', acks: -1, messages: [0, 1, 2].map((partition) => ({ partition, value: `w${partition}` })) })
    await t2.abort()
    for (const p of [0, 1, 2]) {
      const leader = cluster.brokers.get(other.metadataCache.partitionRegistration('tx', p)!.leader)!
      await until(`the ABORT marker in tx-${p}`, () => logContents(leader, 'tx', p).join() === `v${p},COMMIT,w${p},ABORT`, 20_000)
    }
    expect(next.transactionCoordinator.describeTransactions(['cluster-tx'])[0].producerEpoch).toBeGreaterThan(0)

    // The log side replicates with the markers: on every live replica the last stable offset
    // reaches the end (v, COMMIT, w, ABORT) and the aborted transaction is in its .txnindex, so a
    // follower that becomes leader serves READ_COMMITTED as its leader did.
    for (const b of cluster.brokers.values()) {
      for (const p of [0, 1, 2]) {
        await until(
          `tx-${p} stable on broker ${b.config.nodeId}`,
          () => {
            const log = b.logManager.getLog('tx', p)
            return log?.lastStableOffset() === 4n && log.collectAbortedTransactions(0n, 4n).length === 1
          },
          20_000,
        )
      }
    }
    // And a READ_COMMITTED consumer (ferrolog's, assigned: no group needed) reads the committed
    // records only, from whichever brokers now lead.
    const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${other.port}`, isolationLevel: 'read_committed', autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 })
    try {
      consumer.assign([0, 1, 2].map((partition) => ({ topic: 'tx', partition })))
      const read: string[] = []
      for (let i = 0; i < 50 && [0, 1, 2].some((p) => (consumer.position('tx', p) ?? 0n) < 4n); i++) {
        for (const batch of await consumer.poll()) read.push(...batch.records.map((r) => r.value!.toString()))
      }
      expect([0, 1, 2].map((p) => consumer.position('tx', p))).toEqual([4n, 4n, 4n])
      expect(read.sort()).toEqual(['v0', 'v1', 'v2'])
    } finally {
      await consumer.close()
    }
  }, 120_000)
})

describe('transaction version 2 in cluster mode', () => {
  it("Kafka's Java producer commits and aborts while the leaders add the partitions at the coordinator on another broker", async () => {
    fetchKafkaJars()
    cluster = await EtcdBrokerCluster.start([1, 2, 3], { 'min.insync.replicas': '2', 'default.replication.factor': '3' })
    const b1 = cluster.broker(1)
    const a = kafka(b1.port).admin()
    clients.push(a)
    await a.connect()
    await a.createTopics({
      topics: [
        { topic: 'jtx', numPartitions: 2, replicationFactor: 3 },
        { topic: 'jin', numPartitions: 1, replicationFactor: 3 },
      ],
    })
    const leaderOf = (t: string, p: number) => b1.metadataCache.partitionRegistration(t, p)?.leader ?? -1
    await until('jtx led', () => leaderOf('jtx', 0) >= 0 && leaderOf('jtx', 1) >= 0, 20_000)
    // Two leaders: at least one is not the transaction coordinator, whichever broker that is.
    expect(leaderOf('jtx', 0)).not.toBe(leaderOf('jtx', 1))

    const r = await runJava(join(__dirname, '../interop/java/TxnProducer.java'), [`127.0.0.1:${b1.port}`, 'commit-abort', 'tv2-cluster', '60000'])
    expect(r.stdout.trim().split('\n'), r.stderr).toEqual(['committed', 'aborted'])

    const coordinatorId = leaderOf('__transaction_state', partitionFor('tv2-cluster', 50))
    const coordinator = cluster.broker(coordinatorId)
    expect([leaderOf('jtx', 0), leaderOf('jtx', 1)].some((l) => l !== coordinatorId)).toBe(true)
    // Epoch 0 from InitProducerId, bumped by the commit (1) and by the abort (2).
    await until('the abort completed', () => coordinator.transactionCoordinator.describeTransactions(['tv2-cluster'])[0].transactionState === 'CompleteAbort', 20_000)
    const txn = coordinator.transactionCoordinator.stateManager.transactions.get('tv2-cluster')!
    expect([txn.producerEpoch, txn.clientTransactionVersion]).toEqual([2, 2])
    for (const p of [0, 1]) {
      const leader = cluster.broker(leaderOf('jtx', p))
      const expected = p === 0 ? 'c1,c3,COMMIT,a1,ABORT' : 'c2,COMMIT,a2,ABORT'
      await until(`the markers in jtx-${p}`, () => logContents(leader, 'jtx', p).join() === expected, 20_000)
      const log = leader.logManager.getLog('jtx', p)!
      const markerEpochs = log
        .readBatches(log.logStartOffset(), { isolation: 'LOG_END' })
        .filter((b) => b.isControl)
        .map((b) => b.producerEpoch)
      expect(markerEpochs).toEqual([1, 2])
    }
    // The offsets partition was added by TxnOffsetCommit v5 (no AddOffsetsToTxn), committed with the transaction.
    const groupCoordinator = cluster.broker(leaderOf('__consumer_offsets', partitionFor('jgroup', 50)))
    await until('the committed offset', () => groupCoordinator.groupCoordinator.offsets.get('jgroup', 'jin', 0)?.offset === 42n, 20_000)
  }, 300_000)
})

describe("finalized features and ferrolog's Producer in cluster mode", () => {
  /** One transaction committed, one aborted, by ferrolog's Producer, one record per partition of `topic` in each. */
  async function commitThenAbort(port: number, transactionalId: string, topic: string, partitions: number[]): Promise<void> {
    const producer = new FerrologProducer({ bootstrapServers: `127.0.0.1:${port}`, 'transactional.id': transactionalId })
    try {
      await producer.initTransactions()
      producer.beginTransaction()
      const sends = partitions.map((partition) => producer.send({ topic, partition, value: `${transactionalId}-c${partition}` }))
      await producer.commitTransaction()
      await Promise.all(sends)
      producer.beginTransaction()
      const aborted = partitions.map((partition) => producer.send({ topic, partition, value: `${transactionalId}-a${partition}` }))
      await Promise.allSettled(aborted)
      await producer.abortTransaction()
    } finally {
      await producer.close()
    }
  }

  /** The epochs of the markers of `transactionalId`'s producer in a partition's log. */
  function markerEpochs(b: Broker, topic: string, partition: number, producerId: bigint): number[] {
    const log = b.logManager.getLog(topic, partition)!
    return log
      .readBatches(log.logStartOffset(), { isolation: 'LOG_END' })
      .filter((batch) => batch.isControl && batch.producerId === producerId)
      .map((batch) => batch.producerEpoch)
  }

  it('kafka-features.sh on one broker changes transaction.version on all of them (etcd, kept across a restart); the markers of either version reach partitions led by other brokers', async () => {
    fetchKafkaJars()
    cluster = await EtcdBrokerCluster.start([1, 2, 3], { 'min.insync.replicas': '2', 'default.replication.factor': '3' })
    const b1 = cluster.broker(1)
    const a = kafka(b1.port).admin()
    clients.push(a)
    await a.connect()
    await a.createTopics({ topics: [{ topic: 'ftx', numPartitions: 3, replicationFactor: 3 }] })
    const leaderOf = (t: string, p: number) => b1.metadataCache.partitionRegistration(t, p)?.leader ?? -1
    await until('ftx led', () => [0, 1, 2].every((p) => leaderOf('ftx', p) >= 0), 20_000)

    const run = async (id: string, level: number) => {
      await commitThenAbort(b1.port, id, 'ftx', [0, 1, 2])
      const coordinatorId = leaderOf('__transaction_state', partitionFor(id, 50))
      const coordinator = cluster.broker(coordinatorId)
      await until(`${id} ended`, () => coordinator.transactionCoordinator.describeTransactions([id])[0].transactionState === 'CompleteAbort', 20_000)
      const txn = coordinator.transactionCoordinator.stateManager.transactions.get(id)!
      const remote = [0, 1, 2].filter((p) => leaderOf('ftx', p) !== coordinatorId)
      expect(remote.length).toBeGreaterThan(0)
      // Version 2: epoch 0 from InitProducerId, the commit's marker at 1, the abort's at 2; version 1: both at 0.
      const expected = level >= 2 ? [1, 2] : [0, 0]
      for (const p of remote) await until(`${id}'s markers in ftx-${p}`, () => markerEpochs(cluster.broker(leaderOf('ftx', p)), 'ftx', p, txn.producerId).join() === expected.join(), 20_000)
      expect([txn.producerEpoch, txn.clientTransactionVersion]).toEqual(level >= 2 ? [2, 2] : [0, 0])
    }

    await run('ftx-tv2', 2)
    const r = await runKafkaClass('org.apache.kafka.tools.FeatureCommand', ['--bootstrap-server', `127.0.0.1:${b1.port}`, 'downgrade', '--feature', 'transaction.version=1'], '', 60_000)
    expect([r.status, r.stdout.trim()], r.stderr).toEqual([0, 'transaction.version was downgraded to 1.'])
    await until('every broker at transaction.version 1', () => [1, 2, 3].every((id) => cluster.broker(id).finalizedFeatures.level('transaction.version') === 1), 20_000)
    // A broker restarted reads it back from etcd.
    await cluster.stop(3)
    const restarted = await cluster.start(3)
    expect(restarted.finalizedFeatures.level('transaction.version')).toBe(1)
    await until('every broker sees all', () => [...cluster.brokers.values()].every((b) => b.metadataCache.aliveBrokers().length === 3), 20_000)
    await until('ftx led', () => [0, 1, 2].every((p) => leaderOf('ftx', p) >= 0 && cluster.brokers.has(leaderOf('ftx', p))), 20_000)
    await run('ftx-tv1', 1)

    // read_committed: each committed record once, nothing aborted.
    const consumer = new Consumer({ bootstrapServers: `127.0.0.1:${b1.port}`, isolationLevel: 'read_committed', autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 })
    try {
      consumer.assign([0, 1, 2].map((partition) => ({ topic: 'ftx', partition })))
      const read: string[] = []
      for (let i = 0; i < 100 && read.length < 6; i++) for (const batch of await consumer.poll(200)) read.push(...batch.records.map((rec) => rec.value!.toString()))
      for (const batch of await consumer.poll(300)) read.push(...batch.records.map((rec) => rec.value!.toString()))
      expect(read.sort()).toEqual(['ftx-tv1-c0', 'ftx-tv1-c1', 'ftx-tv1-c2', 'ftx-tv2-c0', 'ftx-tv2-c1', 'ftx-tv2-c2'])
    } finally {
      await consumer.close()
    }
  }, 300_000)
})
