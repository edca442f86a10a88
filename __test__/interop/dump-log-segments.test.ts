/**
 * Apache Kafka's own DumpLogSegments (Kafka 4.4 jars from Maven Central, fetched by
 * tools/kafka/fetch-jars.sh) reads the segments ferrolog writes, with deep iteration and the
 * broker's index sanity check, without complaint, and reports the batches and records we wrote.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type CompressionType } from '../../ts/index.js'
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
    expect(dumped).toEqual(
      ours.map((b) => ({ baseOffset: b.baseOffset, lastOffset: b.lastOffset, epoch: b.partitionLeaderEpoch, codec: b.compression, valid: 'true' })),
    )
    const recordLines = run.stdout.split('\n').filter((l) => l.startsWith('| offset: '))
    expect(recordLines).toHaveLength(n)
    expect(recordLines[7]).toContain('key: key-7 payload: value 7 ')
    expect(run.stdout.match(/passed sanity check/g)?.length).toBe(segments * 2)
  })
})
