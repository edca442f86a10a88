/**
 * Apache Kafka's own DumpLogSegments (Kafka 4.4 jars from Maven Central, fetched by
 * tools/kafka/fetch-jars.sh) reads the segments ferrolog writes, with deep iteration and the
 * broker's index sanity check, without complaint, and reports the batches and records we wrote;
 * and reads our transaction indexes and producer snapshots as the entries we meant.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { LogManager, buildBatch, silentLogger, type BackendName, type CompressionType } from '../../ts/index.js'
import { buildEndTxnMarker } from '../../ts/protocol/control-record.js'
import { tempDir } from '../helpers/tmp.js'

const ROOT = join(__dirname, '../..')
const DUMP_LOG = join(ROOT, 'tools/kafka/dump-log.sh')
const CODECS: CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

beforeAll(() => {
  execFileSync('bash', [join(ROOT, 'tools/kafka/fetch-jars.sh')], { stdio: 'ignore' })
}, 300_000)

describe.each(['native', 'js'] as BackendName[])('DumpLogSegments on files of the %s backend', (backend) => {
  it('finds every batch valid, the indexes sane and the offsets we wrote', async () => {
    const dataDir = tempDir()
    const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
    const log = await manager.getOrCreateLog('interop', 0, { config: { segmentBytes: 4096, indexIntervalBytes: 512 } })
    let n = 0
    for (let i = 0; i < 150; i++) {
      const count = 1 + (i % 9)
      const records = Array.from({ length: count }, () => {
        const k = n++
        return {
          key: k % 5 === 0 ? null : `key-${k}`,
          value: `value ${k} `.repeat(1 + (k % 13)),
          headers: k % 3 === 0 ? [{ key: 'trace', value: `t-${k}` }] : [],
          timestamp: 1_700_000_000_000 + k * 10,
        }
      })
      log.append(records, { compression: CODECS[i % CODECS.length], leaderEpoch: i < 75 ? 0 : 1 })
    }
    const ours = log.readBatches(0n, { maxBytes: 1 << 24, isolation: 'LOG_END' })
    const segments = log.segments().length
    await manager.close()
    expect(segments).toBeGreaterThan(2)

    const run = spawnSync('bash', [DUMP_LOG, join(dataDir, 'interop-0')], { encoding: 'utf8', maxBuffer: 64 << 20 })
    expect(run.stderr).not.toMatch(/PROBLEM/)
    expect(run.status).toBe(0)
    const batchLines = run.stdout.split('\n').filter((l) => l.startsWith('baseOffset: '))
    const dumped = batchLines.map((l) => ({
      baseOffset: BigInt(/baseOffset: (\d+)/.exec(l)![1]),
      lastOffset: BigInt(/lastOffset: (\d+)/.exec(l)![1]),
      epoch: Number(/partitionLeaderEpoch: (-?\d+)/.exec(l)![1]),
      codec: /compresscodec: (\w+)/.exec(l)![1],
      valid: /isvalid: (\w+)/.exec(l)![1],
    }))
    expect(dumped).toEqual(ours.map((b) => ({ baseOffset: b.baseOffset, lastOffset: b.lastOffset, epoch: b.partitionLeaderEpoch, codec: b.compression, valid: 'true' })))
    const recordLines = run.stdout.split('\n').filter((l) => l.startsWith('| offset: '))
    expect(recordLines).toHaveLength(n)
    expect(recordLines[7]).toContain('key: key-7 payload: value 7 ')
    expect(run.stdout.match(/passed sanity check/g)?.length).toBe(segments * 2)
  })
})

describe.each(['native', 'js'] as BackendName[])('DumpLogSegments on the transaction files of the %s backend', (backend) => {
  it('reads every .txnindex entry and .snapshot entry we wrote, and the markers', async () => {
    const dataDir = tempDir()
    const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
    const log = await manager.getOrCreateLog('txn', 0, { config: { segmentBytes: 1024, indexIntervalBytes: 256 } })
    const coordinator = { origin: 'COORDINATOR' } as const
    const seq = new Map<bigint, number>()
    const data = (producerId: bigint, n: number) => {
      const baseSequence = seq.get(producerId) ?? 0
      seq.set(producerId, baseSequence + n)
      const records = Array.from({ length: n }, (_, i) => ({ key: `p${producerId}`, value: `value ${baseSequence + i} `.repeat(8) }))
      log.append(buildBatch(records, { producerId, producerEpoch: 0, baseSequence, isTransactional: true }))
    }
    const marker = (type: 'COMMIT' | 'ABORT', producerId: bigint) => log.append(buildEndTxnMarker({ type, producerId, producerEpoch: 0, coordinatorEpoch: 2 }), coordinator)
    // Producers 1-3 interleaved over several segments; 2 and 3 abort, 1 commits and stays open at the end.
    for (let round = 0; round < 6; round++) {
      data(1n, 2)
      data(2n, 3)
      if (round % 2 === 1) data(3n, 1)
      marker(round % 3 === 2 ? 'COMMIT' : 'ABORT', 2n)
      if (round % 2 === 1) marker('ABORT', 3n)
      if (round < 5) marker('COMMIT', 1n)
    }
    const aborted = log.collectAbortedTransactions(0n, log.logEndOffset())
    const segments = log.segments().length
    await manager.close()
    expect(segments).toBeGreaterThan(2)
    expect(aborted.length).toBe(7)

    const dir = join(dataDir, 'txn-0')
    const run = spawnSync('bash', [DUMP_LOG, dir], { encoding: 'utf8', maxBuffer: 64 << 20 })
    expect(run.stderr).not.toMatch(/PROBLEM/)
    expect(run.status).toBe(0)
    const entries = [...run.stdout.matchAll(/^version: 0 producerId: (\d+) firstOffset: (\d+) lastOffset: (\d+) lastStableOffset: (\d+)$/gm)]
    expect(entries.map((m) => ({ producerId: BigInt(m[1]), firstOffset: BigInt(m[2]) }))).toEqual(aborted.map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset })))
    // Each entry ends at an ABORT marker of its producer, and its LSO is at most the marker's next offset.
    const markers = new Map([...run.stdout.matchAll(/^\| offset: (\d+) .* endTxnMarker: (\w+) coordinatorEpoch: 2$/gm)].map((m) => [BigInt(m[1]), m[2]]))
    for (const m of entries) {
      expect(markers.get(BigInt(m[3]))).toBe('ABORT')
      expect(BigInt(m[4])).toBeLessThanOrEqual(BigInt(m[3]) + 1n)
    }
    expect([...markers.values()].filter((t) => t === 'ABORT')).toHaveLength(7)
    // The last snapshot (written at close) has producer 1's transaction still open.
    const snapshotLines = run.stdout.split('\n').filter((l) => l.startsWith('producerId: 1 '))
    expect(snapshotLines.length).toBeGreaterThan(0)
    expect(snapshotLines.at(-1)).toMatch(/currentTxnFirstOffset: OptionalLong\[\d+\]/)
  })
})
