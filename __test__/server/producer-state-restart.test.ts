/**
 * The idempotence window across broker restarts and over time (ts/replica/producer-state.ts
 * joined to the log's producer state and its `.snapshot` files), through real sockets with raw
 * Produce requests of fixed producer ids, epochs and sequences:
 *
 * - a producer whose last write is older than the tail the window scans (32 MiB) retries it
 *   after a clean restart and after a kill -9: answered with the original offset, not appended;
 * - kill -9 while idempotent producers write: every acknowledged batch is there once, each
 *   producer's state continues where its log ends;
 * - every `.snapshot` spoiled after a kill -9 or a clean stop: the broker starts, the state is
 *   rebuilt from the log (the spoiled files deleted), DescribeProducers shows it, and the old
 *   producer's retry is still answered with its original offset;
 * - producer.id.expiration.ms forgets an idle producer (a transaction open keeps it), and is
 *   dynamic: lowered by IncrementalAlterConfigs, the next periodic check applies it.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { describeProducersCodec, type ProducerStateDescription } from '../../ts/protocol/apis/describe-producers.js'
import { ConfigResourceType } from '../../ts/protocol/apis/describe-configs.js'
import { ConfigOperation, incrementalAlterConfigsCodec } from '../../ts/protocol/apis/incremental-alter-configs.js'
import { produceCodec, type PartitionProduceResponse } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { LogManager, silentLogger, type BackendName } from '../../ts/index.js'
import { PRODUCER_STATE_SCAN_BYTES } from '../../ts/replica/producer-state.js'
import { decodeProducerSnapshot } from '../../ts/storage/js/producer-snapshot.js'
import { startBroker } from '../helpers/broker.js'
import { createTopicOn, spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'idem'
const SEGMENT_BYTES = 1024 * 1024
/** Filler batches of ~900 KB: enough of them to push a producer's last batch out of the scanned tail. */
const FILLER_RECORD = Buffer.alloc(900, 'x')
const FILLER_BATCHES = Math.ceil((PRODUCER_STATE_SCAN_BYTES + 4 * SEGMENT_BYTES) / (1000 * FILLER_RECORD.length)) + 1

let broker: Broker | undefined
let child: BrokerProcess | undefined
let client: NetworkClient | undefined
afterEach(async () => {
  await client?.close()
  await broker?.stop()
  await child?.stop()
  client = broker = child = undefined
})

async function produce(c: NetworkClient, batch: Buffer, acks = -1): Promise<PartitionProduceResponse> {
  const response = await c.send(produceCodec, 11, {
    transactionalId: null,
    acks,
    timeoutMs: 10_000,
    topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch }] }],
  })
  return response.responses[0]!.partitionResponses[0]!
}

function idempotent(producerId: bigint, seq: number, n = 1, timestamp = Date.now()): Buffer {
  return buildBatch(
    Array.from({ length: n }, (_, i) => ({ value: `${producerId}-${seq + i}`, timestamp })),
    { producerId, producerEpoch: 0, baseSequence: seq },
  )
}

/** Writes the filler batches; the log end offset after them. */
async function fill(c: NetworkClient): Promise<bigint> {
  let end = -1n
  for (let i = 0; i < FILLER_BATCHES; i++) {
    const r = await produce(c, buildBatch(Array.from({ length: 1000 }, () => ({ value: FILLER_RECORD }))), 1)
    expect(r.errorCode).toBe(ErrorCode.NONE)
    end = r.baseOffset + 1000n
  }
  return end
}

async function describeProducers(c: NetworkClient): Promise<ProducerStateDescription[]> {
  const r = await c.send(describeProducersCodec, 0, { topics: [{ name: TOPIC, partitionIndexes: [0] }] })
  const p = r.topics[0]!.partitions[0]!
  expect(p.errorCode).toBe(ErrorCode.NONE)
  return [...p.activeProducers].sort((a, b) => (a.producerId < b.producerId ? -1 : 1))
}

/** The `.snapshot` files of a partition dir. */
function snapshotFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.snapshot'))
    .map((n) => join(dir, n))
}

/** Spoils every snapshot a different way: a flipped byte (CRC), torn, a wrong version, empty; how many. */
function spoilSnapshots(dir: string): number {
  const files = snapshotFiles(dir)
  files.forEach((file, i) => {
    const bytes = readFileSync(file)
    if (i % 4 === 0) bytes[bytes.length - 1]! ^= 0xff
    else if (i % 4 === 2) bytes.writeInt16BE(7, 0)
    writeFileSync(file, i % 4 === 1 ? bytes.subarray(0, bytes.length - 3) : i % 4 === 3 ? Buffer.alloc(0) : bytes)
  })
  return files.length
}

/** Every value of the log with its offset, read from the data dir of a stopped broker. */
async function valuesIn(dataDir: string): Promise<Map<string, bigint[]>> {
  const manager = await LogManager.open({ dataDir, logger: silentLogger, retentionCheckIntervalMs: 0 })
  try {
    const log = manager.getLog(TOPIC, 0)!
    const out = new Map<string, bigint[]>()
    for (let offset = log.logStartOffset(); offset < log.logEndOffset();) {
      const batches = log.readBatches(offset, { maxBytes: 4 * 1024 * 1024, isolation: 'LOG_END' })
      if (batches.length === 0) break
      for (const b of batches) {
        if (b.producerId >= 0n) for (const r of b.records) out.set(r.value!.toString(), [...(out.get(r.value!.toString()) ?? []), r.offset])
        offset = b.lastOffset + 1n
      }
    }
    return out
  } finally {
    await manager.close()
  }
}

describe.each<BackendName>(['native', 'js'])('a restart keeps the idempotence window (%s)', (backend) => {
  it('a producer whose last write is older than the scanned tail retries after a restart without a duplicate', async () => {
    const dataDir = tempDir()
    broker = await startBroker({ dataDir, backend })
    await broker.createTopic(TOPIC, 1, { 'segment.bytes': String(SEGMENT_BYTES) })
    client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    expect(await produce(client, idempotent(7n, 0, 2))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
    expect(await produce(client, idempotent(7n, 2, 3))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
    await fill(client)
    const end = broker.logManager.getLog(TOPIC, 0)!.logEndOffset()
    await client.close()
    await broker.stop()

    broker = await startBroker({ dataDir, backend })
    client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    // The retry of the last batch: its original offsets, nothing appended.
    expect(await produce(client, idempotent(7n, 2, 3))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
    expect(broker.logManager.getLog(TOPIC, 0)!.logEndOffset()).toBe(end)
    // The window still knows the producer's sequence: a gap is refused, the next batch follows.
    expect((await produce(client, idempotent(7n, 9))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    expect(await produce(client, idempotent(7n, 5))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: end })
  }, 120_000)
})

describe('kill -9 keeps the idempotence window', () => {
  it('while producers write: every acknowledged batch is there once, retries after the restart are duplicates', async () => {
    child = await spawnBroker({})
    const dataDir = child.dataDir
    await createTopicOn(child.port, TOPIC, 1, { 'segment.bytes': String(SEGMENT_BYTES) })
    client = await NetworkClient.connect(`127.0.0.1:${child.port}`)
    // Old producers: their last batches end up before the scanned tail and only in snapshots.
    const old = [1n, 2n, 3n]
    const oldOffsets = new Map<bigint, bigint>()
    for (const id of old) {
      await produce(client, idempotent(id, 0, 2))
      oldOffsets.set(id, (await produce(client, idempotent(id, 2, 2))).baseOffset)
    }
    await fill(client)

    // Writers, one request in flight each, until the broker dies under them.
    const writers = [11n, 12n, 13n, 14n]
    const acked = new Map<bigint, Array<{ seq: number; offset: bigint }>>(writers.map((id) => [id, []]))
    const clients = await Promise.all(writers.map(() => NetworkClient.connect(`127.0.0.1:${child!.port}`)))
    let stop = false
    const running = writers.map(async (id, i) => {
      for (let seq = 0; !stop && seq < 100_000; seq += 3) {
        try {
          const r = await produce(clients[i]!, idempotent(id, seq, 3))
          if (r.errorCode !== ErrorCode.NONE) throw new Error(`producer ${id} seq ${seq}: error ${r.errorCode}`)
          acked.get(id)!.push({ seq, offset: r.baseOffset })
        } catch (err) {
          if (stop) return
          throw err
        }
      }
    })
    while ([...acked.values()].some((a) => a.length < 20)) await new Promise((r) => setTimeout(r, 20))
    process.kill(child.pid, 'SIGKILL')
    stop = true
    await Promise.allSettled(running)
    await child.stop()
    for (const c of clients) await c.close().catch(() => {})
    await client.close().catch(() => {})

    child = await spawnBroker({ dataDir })
    client = await NetworkClient.connect(`127.0.0.1:${child.port}`)
    for (const id of old) expect(await produce(client, idempotent(id, 2, 2))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: oldOffsets.get(id) })
    for (const id of writers) {
      const last = acked.get(id)!.at(-1)!
      // The last acknowledged batch, or the one in flight at the kill if it made it to the log: a duplicate either way.
      const r = await produce(client, idempotent(id, last.seq, 3))
      expect(r.errorCode).toBe(ErrorCode.NONE)
      if (r.baseOffset !== last.offset) {
        // Not the acknowledged one's offset: only possible if the unacknowledged batch after it landed, so that is the retry to check.
        const next = await produce(client, idempotent(id, last.seq + 3, 3))
        expect(next.errorCode).toBe(ErrorCode.NONE)
      }
      // The state continues: the next sequence after the log's last batch is accepted, a gap is not.
      expect((await produce(client, idempotent(id, 1_000_000))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    }
    await client.close()
    client = undefined
    await child.stop()
    child = undefined

    const values = await valuesIn(dataDir)
    for (const id of writers) {
      for (const { seq, offset } of acked.get(id)!) {
        for (let i = 0; i < 3; i++) expect(values.get(`${id}-${seq + i}`), `${id}-${seq + i}`).toEqual([offset + BigInt(i)])
      }
    }
    for (const [value, offsets] of values) expect(offsets, value).toHaveLength(1)
  }, 180_000)
})

describe.each<[BackendName, 'kill -9' | 'clean stop']>([
  ['native', 'kill -9'],
  ['native', 'clean stop'],
  ['js', 'kill -9'],
  ['js', 'clean stop'],
])('every snapshot spoiled (%s, %s)', (backend, stop) => {
  it('the broker starts, rebuilds the state from the log, describes it, and the old retry is a duplicate', async () => {
    const props = { 'transaction.partition.verification.enable': 'false' }
    child = await spawnBroker({ backend, props })
    const dataDir = child.dataDir
    await createTopicOn(child.port, TOPIC, 1, { 'segment.bytes': String(SEGMENT_BYTES) })
    client = await NetworkClient.connect(`127.0.0.1:${child.port}`)
    const t = Date.now()
    expect(await produce(client, idempotent(7n, 0, 2, t))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
    expect(await produce(client, idempotent(7n, 2, 3, t))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
    // Producer 8 leaves a transaction open (no marker): its first offset must come back too.
    const txn = buildBatch([{ value: 'open', timestamp: t }], { producerId: 8n, producerEpoch: 3, baseSequence: 0, isTransactional: true })
    expect(await produce(client, txn)).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 5n })
    const end = await fill(client)
    await client.close()
    if (stop === 'kill -9') process.kill(child.pid, 'SIGKILL')
    await child.stop()
    child = undefined
    const partitionDir = join(dataDir, `${TOPIC}-0`)
    expect(spoilSnapshots(partitionDir)).toBeGreaterThan(10)

    child = await spawnBroker({ backend, props, dataDir })
    client = await NetworkClient.connect(`127.0.0.1:${child.port}`)
    expect(await describeProducers(client)).toEqual([
      { producerId: 7n, producerEpoch: 0, lastSequence: 4, lastTimestamp: BigInt(t), coordinatorEpoch: -1, currentTxnStartOffset: -1n },
      { producerId: 8n, producerEpoch: 3, lastSequence: 0, lastTimestamp: BigInt(t), coordinatorEpoch: -1, currentTxnStartOffset: 5n },
    ])
    expect(await produce(client, idempotent(7n, 2, 3))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
    expect((await produce(client, idempotent(7n, 9))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    // The retry appended nothing: the next batch lands where the filler ended.
    expect(await produce(client, idempotent(7n, 5))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: end })
    await client.close()
    client = undefined
    await child.stop()
    child = undefined
    // The close wrote a snapshot at the log end, with both producers. After the clean stop every
    // spoiled file was read (newest first) and deleted; after the kill, recovery replayed the
    // log from its start and read none of them: those above stay until read, as in Kafka.
    const left = snapshotFiles(partitionDir).sort()
    expect(decodeProducerSnapshot(readFileSync(left.at(-1)!)).map((e) => [e.producerId, e.lastSequence, e.currentTxnFirstOffset])).toEqual([
      [7n, 5, -1n],
      [8n, 0, 5n],
    ])
    if (stop === 'clean stop') expect(left).toHaveLength(1)
  }, 180_000)
})

describe('producer.id.expiration.ms', () => {
  it('forgets an idle producer in the window and the log, but not one with a transaction open', async () => {
    broker = await startBroker({
      props: { 'producer.id.expiration.ms': '1500', 'producer.id.expiration.check.interval.ms': '100', 'transaction.partition.verification.enable': 'false' },
    })
    await broker.createTopic(TOPIC, 1, {})
    client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    const now = Date.now()
    expect(await produce(client, idempotent(21n, 0, 1, now))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
    const txn = buildBatch([{ value: 'open', timestamp: now }], { producerId: 22n, producerEpoch: 0, baseSequence: 0, isTransactional: true })
    expect(await produce(client, txn)).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 1n })
    expect(await produce(client, idempotent(21n, 0, 1, now))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })

    const log = broker.logManager.getLog(TOPIC, 0)!
    const partition = broker.replicaManager.getPartition({ topic: TOPIC, partition: 0 })!
    const deadline = Date.now() + 20_000
    while (log.producerStateEntries().some((e) => e.producerId === 21n) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(log.producerStateEntries().map((e) => e.producerId)).toEqual([22n])
    expect(partition.producerState().lastEntry(21n)).toBeUndefined()
    expect(partition.producerState().lastEntry(22n)).toBeDefined()
    // Unknown again: any sequence is accepted, the old one too (as Kafka once the producer expired).
    expect(await produce(client, idempotent(21n, 0, 1))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n })
  }, 60_000)

  it('is dynamic (cluster-wide, as in Kafka): lowered by IncrementalAlterConfigs, it expires an idle producer', async () => {
    broker = await startBroker({ props: { 'producer.id.expiration.check.interval.ms': '100' } })
    await broker.createTopic(TOPIC, 1, {})
    client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    expect(await produce(client, idempotent(31n, 0, 1))).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
    const log = broker.logManager.getLog(TOPIC, 0)!
    // A day by default: many checks pass and the producer stays.
    expect(broker.replicaManager.removeExpiredProducers(BigInt(Date.now()))).toBe(0)
    expect(log.producerStateEntries().map((e) => e.producerId)).toEqual([31n])
    const altered = await client.send(incrementalAlterConfigsCodec, 1, {
      resources: [{ resourceType: ConfigResourceType.BROKER, resourceName: '', configs: [{ name: 'producer.id.expiration.ms', configOperation: ConfigOperation.SET, value: '1' }] }],
      validateOnly: false,
    })
    expect(altered.responses[0]!.errorCode).toBe(ErrorCode.NONE)
    while (log.producerStateEntries().length > 0) await new Promise((r) => setTimeout(r, 50))
    const partition = broker.replicaManager.getPartition({ topic: TOPIC, partition: 0 })!
    expect(partition.producerState().lastEntry(31n)).toBeUndefined()
    expect(await describeProducers(client)).toEqual([])
  }, 60_000)
})
