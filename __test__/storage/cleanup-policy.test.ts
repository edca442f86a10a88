/**
 * cleanup.policy in the logs of both engines: retention by time and size only when the policy
 * includes delete (a compacted log keeps its records for the cleaner), and a compacted log's
 * active segment rolls after max.compaction.lag.ms (KIP-354) so that the cleaner may reach it.
 * Also the broker's log.cleaner.* settings and their refusals.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type LogConfig } from '../../ts/index.js'
import { brokerConfigFrom, ConfigError, topicLogConfig } from '../../ts/server/config.js'
import { internalTopicLogConfig } from '../../ts/server/internal-topics.js'
import { engineLogConfig } from '../../ts/storage/types.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { tempDir } from '../helpers/tmp.js'

const OLD = 1_600_000_000_000

describe.each(['native', 'js'] as BackendName[])('cleanup.policy on the %s engine', (backend) => {
  it('time and size retention apply to delete and compact,delete logs, not to compact-only ones', async () => {
    const configs: Record<string, Partial<LogConfig>> = {
      compact: { cleanupPolicy: ['compact'], retentionMs: 1000, retentionBytes: 10 },
      both: { cleanupPolicy: ['compact', 'delete'], retentionMs: 1000 },
      neither: { cleanupPolicy: [], retentionMs: 1000 },
      delete: { retentionMs: 1000 },
    }
    const manager = await LogManager.open({ dataDir: tempDir(), backend, logger: silentLogger, retentionCheckIntervalMs: 0, topicConfig: (t) => configs[t] })
    try {
      for (const topic of Object.keys(configs)) {
        const log = await manager.getOrCreateLog(topic, 0)
        for (let i = 0; i < 3; i++) {
          log.append([{ key: 'k', value: `v${i}`, timestamp: OLD + i }])
          log.roll()
        }
      }
      await manager.cleanupLogs(Date.now())
      expect(manager.getLog('compact', 0)!.logStartOffset()).toBe(0n)
      expect(manager.getLog('neither', 0)!.logStartOffset()).toBe(0n)
      expect(manager.getLog('both', 0)!.logStartOffset()).toBe(3n)
      expect(manager.getLog('delete', 0)!.logStartOffset()).toBe(3n)
      // The log start offset still moves segments out of a compacted log (DeleteRecords).
      const compact = manager.getLog('compact', 0)!
      compact.deleteRecordsBefore(2n)
      await manager.cleanupLogs(Date.now())
      expect(compact.segments()[0].baseOffset).toBe(2n)
      // A policy changed to delete brings retention back at the next check.
      configs.compact = { ...configs.compact, cleanupPolicy: ['delete'] }
      manager.reconfigureTopic('compact')
      await manager.cleanupLogs(Date.now())
      expect(compact.logStartOffset()).toBe(3n)
    } finally {
      await manager.close()
    }
  })

  it("a compacted log refuses a record without a key (INVALID_RECORD, as Kafka's LogValidator), compressed or not, sync or async; a delete log takes it", async () => {
    const configs: Record<string, Partial<LogConfig>> = { compact: { cleanupPolicy: ['compact', 'delete'] }, delete: {} }
    const manager = await LogManager.open({ dataDir: tempDir(), backend, logger: silentLogger, retentionCheckIntervalMs: 0, topicConfig: (t) => configs[t] })
    try {
      const compact = await manager.getOrCreateLog('compact', 0)
      compact.append([{ key: 'k', value: 'v' }])
      for (const compression of ['none', 'lz4'] as const) {
        const keyless = buildBatch(
          [
            { key: 'k', value: 'v' },
            { key: null, value: 'no key' },
          ],
          { compression },
        )
        expect(() => compact.append(keyless), compression).toThrow(expect.objectContaining({ code: 'INVALID_RECORD' }))
        await expect(compact.appendAsync(keyless), compression).rejects.toMatchObject({ code: 'INVALID_RECORD' })
      }
      expect(compact.logEndOffset()).toBe(1n)
      // A follower copies what its leader accepted: no key check there, as in Kafka.
      const follower = buildBatch([{ key: null, value: 'copied' }], { baseOffset: 1n })
      compact.appendAsFollower(follower)
      expect(compact.logEndOffset()).toBe(2n)
      const plain = await manager.getOrCreateLog('delete', 0)
      plain.append([{ key: null, value: 'fine' }])
      expect(plain.logEndOffset()).toBe(1n)
      // The policy changed to delete: taken at once.
      configs.compact = { cleanupPolicy: ['delete'] }
      manager.reconfigureTopic('compact')
      compact.append([{ key: null, value: 'now fine' }])
      expect(compact.logEndOffset()).toBe(3n)
    } finally {
      await manager.close()
    }
  })

  it('a compacted log rolls its active segment after max.compaction.lag.ms; a delete log keeps segment.ms', async () => {
    const configs: Record<string, Partial<LogConfig>> = {
      compact: { cleanupPolicy: ['compact'], maxCompactionLagMs: 5 },
      delete: { maxCompactionLagMs: 5 },
    }
    const manager = await LogManager.open({ dataDir: tempDir(), backend, logger: silentLogger, retentionCheckIntervalMs: 0, topicConfig: (t) => configs[t] })
    try {
      for (const topic of ['compact', 'delete']) (await manager.getOrCreateLog(topic, 0)).append([{ key: 'k', value: 'first' }])
      await sleep(30)
      for (const topic of ['compact', 'delete']) (await manager.getOrCreateLog(topic, 0)).append([{ key: 'k', value: 'second' }])
      expect(
        manager
          .getLog('compact', 0)!
          .segments()
          .map((s) => s.baseOffset),
      ).toEqual([0n, 1n])
      expect(manager.getLog('delete', 0)!.segments()).toHaveLength(1)
      // The log keeps the settings as given; only the engine sees the shorter roll.
      expect(manager.getLog('compact', 0)!.config.segmentMs).toBe(7 * 24 * 3600 * 1000)
    } finally {
      await manager.close()
    }
  })
})

describe('compaction settings', () => {
  it('engineLogConfig: no retention without delete, segment.ms bounded by max.compaction.lag.ms with compact', () => {
    const base = brokerConfigFrom({}).logDefaults
    expect(engineLogConfig({ ...base, cleanupPolicy: ['compact'], maxCompactionLagMs: 1000 })).toMatchObject({ retentionMs: -1, retentionBytes: -1, segmentMs: 1000 })
    expect(engineLogConfig({ ...base, cleanupPolicy: ['delete', 'compact'], retentionMs: 5 })).toMatchObject({ retentionMs: 5, segmentMs: base.segmentMs })
    expect(engineLogConfig({ ...base, maxCompactionLagMs: 1000 })).toMatchObject({ segmentMs: base.segmentMs, retentionMs: base.retentionMs })
  })

  it('the internal topics are compacted, with segments of offsets.topic.segment.bytes and transaction.state.log.segment.bytes', () => {
    const defaults = brokerConfigFrom({})
    expect(defaults).toMatchObject({ offsetsTopicSegmentBytes: 104_857_600, transactionStateLogSegmentBytes: 104_857_600 })
    expect(internalTopicLogConfig('__consumer_offsets', defaults)).toEqual({ cleanupPolicy: ['compact'], segmentBytes: 104_857_600 })
    const set = brokerConfigFrom({ 'offsets.topic.segment.bytes': '4096', 'transaction.state.log.segment.bytes': '2048' })
    expect(internalTopicLogConfig('__consumer_offsets', set)).toEqual({ cleanupPolicy: ['compact'], segmentBytes: 4096 })
    expect(internalTopicLogConfig('__transaction_state', set)).toEqual({ cleanupPolicy: ['compact'], segmentBytes: 2048 })
    expect(internalTopicLogConfig('orders', set)).toBeUndefined()
    for (const key of ['offsets.topic.segment.bytes', 'transaction.state.log.segment.bytes']) {
      expect(() => brokerConfigFrom({ [key]: '13' }), key).toThrow(ConfigError)
      expect(() => brokerConfigFrom({ [key]: 'big' }), key).toThrow(ConfigError)
    }
  })

  it("the broker's log.cleaner.* settings, Kafka's defaults, and refusals", () => {
    const defaults = brokerConfigFrom({})
    expect(defaults.cleaner).toEqual({ enableCleaner: true, numThreads: 1, dedupeBufferSize: 134217728, ioBufferSize: 524288, backOffMs: 15000 })
    expect(defaults.logDefaults).toMatchObject({
      cleanupPolicy: ['delete'],
      deleteRetentionMs: 86_400_000,
      minCompactionLagMs: 0,
      maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
      minCleanableDirtyRatio: 0.5,
    })
    const set = brokerConfigFrom({
      'log.cleaner.enable': 'false',
      'log.cleaner.threads': '2',
      'log.cleaner.dedupe.buffer.size': '1048576',
      'log.cleaner.backoff.ms': '100',
      'log.cleanup.policy': 'compact, delete',
      'log.cleaner.min.cleanable.ratio': '0.1',
      'log.cleaner.delete.retention.ms': '1000',
      'log.cleaner.min.compaction.lag.ms': '10',
      'log.cleaner.max.compaction.lag.ms': '9223372036854775807',
    })
    expect(set.cleaner).toMatchObject({ enableCleaner: false, numThreads: 2, dedupeBufferSize: 1048576, backOffMs: 100 })
    expect(set.logDefaults).toMatchObject({
      cleanupPolicy: ['compact', 'delete'],
      minCleanableDirtyRatio: 0.1,
      deleteRetentionMs: 1000,
      minCompactionLagMs: 10,
      maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
    })
    for (const [key, value] of [
      ['log.cleaner.enable', 'yes'],
      ['log.cleaner.threads', '-1'],
      ['log.cleaner.min.cleanable.ratio', '-0.1'],
      ['log.cleanup.policy', 'archive'],
      ['log.cleaner.max.compaction.lag.ms', '0'],
    ]) {
      expect(() => brokerConfigFrom({ [key]: value }), `${key}=${value}`).toThrow(ConfigError)
    }
    expect(() => brokerConfigFrom({ 'log.cleaner.min.compaction.lag.ms': '100', 'log.cleaner.max.compaction.lag.ms': '10' })).toThrow(/conflict/)
    // A topic's lag is checked against the broker's default of the other one.
    expect(() => topicLogConfig({ 'min.compaction.lag.ms': '100' }, set.logDefaults)).not.toThrow()
    expect(() => topicLogConfig({ 'max.compaction.lag.ms': '5' }, set.logDefaults)).toThrow(/min.compaction.lag.ms \(10\) > max.compaction.lag.ms \(5\)/)
    expect(topicLogConfig({ 'cleanup.policy': ' compact ,delete,compact' })).toEqual({ cleanupPolicy: ['compact', 'delete'] })
    expect(topicLogConfig({ 'cleanup.policy': '' })).toEqual({ cleanupPolicy: [] })
  })
})
