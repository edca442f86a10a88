/**
 * A decompression bomb does not stall the broker: one Produce of 40 zstd batches (one per
 * partition), each a single 250 MB record of zeros compressed by the `zstd` CLI to a few KB,
 * while another client times its own ApiVersions requests. Each partition is refused with
 * MESSAGE_TOO_LARGE (the record is larger than the records of a batch may inflate to, 100 MiB,
 * seen from its length varint after the first decompressed block), nothing is appended, and other
 * produce still works. Before the leader's check judged records as they inflate, the native
 * engine inflated all 10 GB on the event loop (seconds of stall for every client).
 *
 * The bomb that passes those limits: 40 partitions, each one batch of 100 records of 1 MB of
 * zeros (100 MB inflated, under the 100 MiB cap), zstd for half of them and gzip for the rest:
 * valid, so it is appended. The leader's check inflates all 4 GB, off the event loop (native:
 * on libuv's worker threads; js: in slices that yield to the loop, gzip on zlib's threads), so
 * the other client is still answered at once. Before, every batch inflated on the loop: seconds.
 */
import { execFileSync } from 'node:child_process'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { createTopicOn, spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const PARTITIONS = 40
const RECORD_BYTES = 250_000_000
/** A generous bound for a shared 2-core machine; the measured figure is logged. */
const MAX_STALL_MS = 1000

/** The valid bomb: records per batch and bytes per record (100 MB of records, under 100 MiB). */
const VALID_RECORDS = 100
const VALID_RECORD_BYTES = 1_000_000

const zstdCli = (_: unknown, data: Buffer): Buffer => execFileSync('zstd', ['-3', '-q', '-c'], { input: data, maxBuffer: 1 << 28 })

let bomb: Buffer
/** The valid bombs: zstd (by the CLI) and gzip, each 100 MB inflated. */
let valid: { zstd: Buffer; gzip: Buffer }
beforeAll(() => {
  bomb = buildBatch([{ value: Buffer.alloc(RECORD_BYTES) }], { compression: 'zstd', nowMs: Date.now(), compressor: zstdCli })
  const records = Array.from({ length: VALID_RECORDS }, () => ({ value: Buffer.alloc(VALID_RECORD_BYTES) }))
  valid = {
    zstd: buildBatch(records, { compression: 'zstd', nowMs: Date.now(), compressor: zstdCli }),
    gzip: buildBatch(records, { compression: 'gzip', nowMs: Date.now() }),
  }
}, 120_000)

let broker: BrokerProcess | undefined
const wires: KafkaWire[] = []
afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  await broker?.stop()
  broker = undefined
})

async function wire(port: number, clientId: string): Promise<KafkaWire> {
  const w = new KafkaWire(await connectTo(port), clientId)
  wires.push(w)
  return w
}

/** Times ApiVersions requests back to back (2 ms apart) until `stop` resolves; the slowest. */
async function probe(w: KafkaWire, stop: Promise<unknown>): Promise<{ maxMs: number; count: number }> {
  let done = false
  void stop.finally(() => (done = true))
  let maxMs = 0
  let count = 0
  while (!done) {
    const t0 = performance.now()
    await w.send(apiVersionsCodec, 2, { clientSoftwareName: 'probe', clientSoftwareVersion: '1' })
    maxMs = Math.max(maxMs, performance.now() - t0)
    count++
    await new Promise((r) => setTimeout(r, 2))
  }
  return { maxMs, count }
}

describe.each(['native', 'js'] as const)('a compression bomb (%s)', (backend) => {
  it('is refused per partition with MESSAGE_TOO_LARGE without stalling other clients', async () => {
    expect(bomb.length).toBeLessThan(64 * 1024)
    broker = await spawnBroker({ backend })
    await createTopicOn(broker.port, 'bomb', PARTITIONS)
    await createTopicOn(broker.port, 'fine', 1)
    const producer = await wire(broker.port, 'bomber')
    const prober = await wire(broker.port, 'prober')
    // Warm both paths first.
    await prober.send(apiVersionsCodec, 2, { clientSoftwareName: 'probe', clientSoftwareVersion: '1' })

    const t0 = performance.now()
    const produced = producer.send(produceCodec, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 30_000,
      topicData: [{ name: 'bomb', partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: bomb })) }],
    })
    const stall = probe(
      prober,
      produced.then(() => new Promise((r) => setTimeout(r, 100))),
    )
    const res = await produced
    const produceMs = performance.now() - t0
    const { maxMs, count } = await stall
    console.log(
      `compression bomb (${backend}): ${PARTITIONS} x ${bomb.length} B -> ${RECORD_BYTES} B each, answered in ${produceMs.toFixed(1)} ms; ` +
        `other client's slowest ApiVersions ${maxMs.toFixed(1)} ms over ${count} requests`,
    )

    const partitions = res.responses[0].partitionResponses
    expect(partitions).toHaveLength(PARTITIONS)
    for (const p of partitions) {
      expect(p.errorCode, p.errorMessage ?? '').toBe(ErrorCode.MESSAGE_TOO_LARGE)
      // From record 0's length varint, or (js) from the zstd frame's declared content size.
      expect(p.errorMessage).toMatch(
        /record 0 of the compressed batch is 250000\d+ bytes, more than the records of a batch may inflate to \(104857600 bytes\)|zstd records of the batch decompress to more than 104857600 bytes/,
      )
    }
    expect(maxMs).toBeLessThan(MAX_STALL_MS)

    const fetched = await prober.send(
      fetchCodec,
      12,
      fetchRequest({
        topics: [
          { topic: 'bomb', topicId: Buffer.alloc(16), partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] },
        ],
      }),
    )
    expect(fetched.responses[0].partitions[0].highWatermark).toBe(0n)

    const fine = await producer.send(produceCodec, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: 'fine', partitionData: [{ index: 0, records: buildBatch([{ value: 'still works' }], { compression: 'zstd' }) }] }],
    })
    expect(fine.responses[0].partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
  }, 120_000)

  it('of valid batches (100 MB inflated each, zstd and gzip) is appended without stalling other clients', async () => {
    expect(valid.zstd.length).toBeLessThan(64 * 1024)
    expect(valid.gzip.length).toBeLessThan(1024 * 1024)
    broker = await spawnBroker({ backend })
    await createTopicOn(broker.port, 'valid-bomb', PARTITIONS)
    const producer = await wire(broker.port, 'bomber')
    const prober = await wire(broker.port, 'prober')
    await prober.send(apiVersionsCodec, 2, { clientSoftwareName: 'probe', clientSoftwareVersion: '1' })

    const codecOf = (index: number): 'zstd' | 'gzip' => (index % 2 === 0 ? 'zstd' : 'gzip')
    const t0 = performance.now()
    const produced = producer.send(produceCodec, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 30_000,
      topicData: [{ name: 'valid-bomb', partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: valid[codecOf(index)] })) }],
    })
    const stall = probe(
      prober,
      produced.then(() => new Promise((r) => setTimeout(r, 100))),
    )
    const res = await produced
    const produceMs = performance.now() - t0
    const { maxMs, count } = await stall
    console.log(
      `valid compression bomb (${backend}): ${PARTITIONS} x ${VALID_RECORDS * VALID_RECORD_BYTES} B inflated (zstd ${valid.zstd.length} B, gzip ${valid.gzip.length} B), ` +
        `answered in ${produceMs.toFixed(1)} ms; other client's slowest ApiVersions ${maxMs.toFixed(1)} ms over ${count} requests`,
    )

    const partitions = res.responses[0].partitionResponses
    expect(partitions).toHaveLength(PARTITIONS)
    for (const p of partitions) expect(p, p.errorMessage ?? '').toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
    expect(maxMs).toBeLessThan(MAX_STALL_MS)

    // Appended as sent: each partition holds its batch's 100 records.
    for (const partition of [0, 1]) {
      const fetched = await prober.send(
        fetchCodec,
        12,
        fetchRequest({
          topics: [
            {
              topic: 'valid-bomb',
              topicId: Buffer.alloc(16),
              partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }],
            },
          ],
        }),
      )
      const p = fetched.responses[0].partitions[0]
      expect(p.highWatermark).toBe(BigInt(VALID_RECORDS))
      expect(p.records?.length).toBe(valid[codecOf(partition)].length)
    }
  }, 180_000)
})
