/**
 * The records a leader refuses one by one (Kafka's LogValidator, KIP-467), in both engines with
 * the same outcome: a record without a key on a compacted log (INVALID_RECORD), a CreateTime
 * timestamp outside [now - message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]
 * and a batch the producer marked LogAppendTime (INVALID_TIMESTAMP). Every bad record of the
 * batch is named (`recordErrors`: its index and Kafka's message), the error's message is Kafka's
 * processRecordErrors text, and nothing of the batch is appended.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildBatch, StorageError, type BackendName, type CompressionType, type LogConfig } from '../../ts/index.js'
import { backendNamed } from '../../ts/storage/backends.js'
import { DEFAULT_LOG_CONFIG, engineLogConfig, type RawLog } from '../../ts/storage/types.js'
import { tempDir } from '../helpers/tmp.js'

const NOW = 1_700_000_000_000
const BACKEND_NAMES: BackendName[] = ['native', 'js']

async function openRaw(backend: BackendName, name: string, config: Partial<LogConfig>): Promise<RawLog> {
  const dir = join(tempDir(), name)
  mkdirSync(dir, { recursive: true })
  return backendNamed(backend).openLog({ dir, config: engineLogConfig({ ...DEFAULT_LOG_CONFIG, ...config }), recoveryPoint: 0n, logStartOffset: 0n, hadCleanShutdown: true })
}

/** What an append's refusal shows: code, message and the named records; or the log end offset after it. */
interface Outcome {
  code?: string
  message?: string
  recordErrors?: ReadonlyArray<{ batchIndex: number; message: string }>
  logEndOffset: bigint
}

async function outcomes(log: RawLog, batch: Buffer, nowMs = NOW): Promise<Outcome[]> {
  const out: Outcome[] = []
  for (const run of [() => log.appendAsLeader(batch, 0, nowMs), () => log.appendAsLeaderAsync(batch, 0, nowMs)]) {
    try {
      await run()
      out.push({ logEndOffset: log.logEndOffset() })
    } catch (err) {
      expect(err).toBeInstanceOf(StorageError)
      const e = err as StorageError
      out.push({ code: e.code, message: e.message, recordErrors: e.recordErrors, logEndOffset: log.logEndOffset() })
    }
  }
  return out
}

/** 100 records, every tenth (index 3, 13, ...) without a key. */
function tenKeylessOfAHundred(compression: CompressionType): Buffer {
  return buildBatch(
    Array.from({ length: 100 }, (_, i) => ({ key: i % 10 === 3 ? null : `k${i}`, value: `v${i}`, timestamp: NOW - 1000 + i })),
    { compression, nowMs: NOW },
  )
}

describe('per-record errors of a leader append (KIP-467)', () => {
  it("a compacted log names each of 10 keyless records of 100, with Kafka's messages, the same in both engines and for every codec", async () => {
    const seen: Record<string, Outcome[]> = {}
    for (const backend of BACKEND_NAMES) {
      const log = await openRaw(backend, 'events-3', { cleanupPolicy: ['compact'] })
      for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as CompressionType[]) {
        const results = await outcomes(log, tenKeylessOfAHundred(compression))
        for (const r of results) {
          expect(r.code, `${backend} ${compression}`).toBe('INVALID_RECORD')
          expect(r.recordErrors!.map((e) => e.batchIndex)).toEqual([3, 13, 23, 33, 43, 53, 63, 73, 83, 93])
          for (const e of r.recordErrors!) expect(e.message).toBe('Compacted topic cannot accept message without key in topic partition events-3')
          expect(r.message).toBe(
            "One or more records have been rejected due to 10 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=3, message='Compacted topic cannot accept message without key in topic partition events-3'), RecordError(batchIndex=13, message='Compacted topic cannot accept message without key in topic partition events-3'), RecordError(batchIndex=23, message='Compacted topic cannot accept message without key in topic partition events-3')]",
          )
          expect(r.logEndOffset).toBe(0n)
        }
        seen[`${backend} ${compression}`] = results
      }
      // The same records with keys are appended.
      log.appendAsLeader(buildBatch([{ key: 'k', value: 'v', timestamp: NOW }], { nowMs: NOW }), 0, NOW)
      expect(log.logEndOffset()).toBe(1n)
      await log.close()
    }
    for (const compression of ['none', 'zstd']) expect(seen[`js ${compression}`]).toEqual(seen[`native ${compression}`])
  })

  it('CreateTime timestamps outside before/after.max.ms are INVALID_TIMESTAMP naming each record; LogAppendTime logs take them; both engines alike', async () => {
    const seen: Record<string, Outcome[]> = {}
    for (const backend of BACKEND_NAMES) {
      const log = await openRaw(backend, 't-0', { messageTimestampBeforeMaxMs: 1000, messageTimestampAfterMaxMs: 500 })
      // Indexes 2 (too old) and 4 (too new) out of range; -1 (no timestamp) is never judged.
      const batch = buildBatch(
        [NOW, NOW - 1000, NOW - 1001, NOW + 500, NOW + 501, -1].map((timestamp, i) => ({ key: `k${i}`, value: 'v', timestamp })),
        { compression: 'lz4', nowMs: NOW },
      )
      const results = await outcomes(log, batch)
      for (const r of results) {
        expect(r.code).toBe('INVALID_TIMESTAMP')
        expect(r.message).toBe('One or more records have been rejected due to invalid timestamp')
        expect(r.recordErrors).toEqual([
          { batchIndex: 2, message: `Timestamp ${NOW - 1001} of message with offset 2 is out of range. The timestamp should be within [${NOW - 1000}, ${NOW + 500}]` },
          { batchIndex: 4, message: `Timestamp ${NOW + 501} of message with offset 4 is out of range. The timestamp should be within [${NOW - 1000}, ${NOW + 500}]` },
        ])
        expect(r.logEndOffset).toBe(0n)
      }
      // By Kafka 4's defaults (before: Long.MAX_VALUE, after: one hour) a record a day ahead is refused, one a year old is not.
      log.updateConfig(engineLogConfig(DEFAULT_LOG_CONFIG))
      const ahead = await outcomes(log, buildBatch([{ key: 'k', value: 'v', timestamp: NOW + 86_400_000 }], { nowMs: NOW }))
      expect(ahead[0].recordErrors).toEqual([
        { batchIndex: 0, message: `Timestamp ${NOW + 86_400_000} of message with offset 0 is out of range. The timestamp should be within [${BigInt(NOW) - (2n ** 63n - 1n)}, ${NOW + 3_600_000}]` },
      ])
      log.appendAsLeader(buildBatch([{ key: 'k', value: 'v', timestamp: NOW - 365 * 86_400_000 }], { nowMs: NOW }), 0, NOW)
      // A LogAppendTime log does not judge CreateTime timestamps.
      log.updateConfig(engineLogConfig({ ...DEFAULT_LOG_CONFIG, messageTimestampType: 'LogAppendTime', messageTimestampAfterMaxMs: 0 }))
      expect((await outcomes(log, batch)).map((r) => r.code)).toEqual([undefined, undefined])
      seen[backend] = [...results, ...ahead]
      await log.close()
    }
    expect(seen.js).toEqual(seen.native)
  })

  it('a batch a producer marked LogAppendTime is refused record by record on a LogAppendTime log; on a CreateTime log its timestamp is judged', async () => {
    const seen: Record<string, Outcome[]> = {}
    for (const backend of BACKEND_NAMES) {
      const batch = buildBatch(
        [
          { key: null, value: 'value' },
          { key: 'key', value: null },
        ],
        { nowMs: NOW, timestampType: 'LogAppendTime' },
      )
      const lat = await openRaw(backend, 'lat-0', { messageTimestampType: 'LogAppendTime' })
      const results = await outcomes(lat, batch)
      for (const r of results) {
        expect(r.code).toBe('INVALID_TIMESTAMP')
        expect(r.recordErrors).toEqual([
          {
            batchIndex: 0,
            message: `Invalid timestamp type in message DefaultRecord(offset=0, timestamp=${NOW}, key=0 bytes, value=5 bytes). Producer should not set timestamp type to LogAppendTime.`,
          },
          {
            batchIndex: 1,
            message: `Invalid timestamp type in message DefaultRecord(offset=1, timestamp=${NOW}, key=3 bytes, value=0 bytes). Producer should not set timestamp type to LogAppendTime.`,
          },
        ])
      }
      const create = await openRaw(backend, 'create-0', {})
      expect((await outcomes(create, batch)).map((r) => r.code)).toEqual([undefined, undefined])
      seen[backend] = results
      await lat.close()
      await create.close()
    }
    expect(seen.js).toEqual(seen.native)
  })
})
