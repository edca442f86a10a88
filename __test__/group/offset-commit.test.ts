import { describe, expect, it } from 'vitest'
import { decodeOffsetKey, decodeOffsetValue, encodeOffsetKey, encodeOffsetValue, OFFSETS_TOPIC, type OffsetCommitEntry } from '../../ts/group/offsets-topic.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, offsetsLogShape, stableGroupOfTwo } from './harness.js'

const entry = (partition: number, offset: bigint): OffsetCommitEntry => ({ topic: 'orders', partition, offset, leaderEpoch: 3, metadata: `m${offset}`, commitTimestamp: 1_700_000_000_000n })

describe('OffsetCommit and the offsets log', () => {
  it('accepts simple commits (generation -1) for an unknown or Empty group, which then exists, Empty', async () => {
    const h = await harness()
    expect(await h.coordinator.commitOffsets('simple', '', -1, [entry(0, 10n)])).toBe(ErrorCode.NONE)
    expect(h.coordinator.group('simple')!.state).toBe('Empty')
    expect(h.coordinator.offsets.get('simple', 'orders', 0)).toMatchObject({ offset: 10n, leaderEpoch: 3, metadata: 'm10' })
    expect(await h.coordinator.commitOffsets('simple', '', -1, [entry(0, 11n)])).toBe(ErrorCode.NONE)
    expect(h.coordinator.offsets.get('simple', 'orders', 0)?.offset).toBe(11n)
    // A generation for a group that does not exist is an older generation's commit.
    expect(await h.coordinator.commitOffsets('unknown', 'm', 3, [entry(0, 1n)])).toBe(ErrorCode.ILLEGAL_GENERATION)
  })

  it('members of a managed group commit in their generation; others are refused', async () => {
    const h = await harness()
    const { leader, generationId } = await stableGroupOfTwo(h)
    expect(await h.coordinator.commitOffsets(GROUP, leader, generationId, [entry(0, 7n)])).toBe(ErrorCode.NONE)
    expect(await h.coordinator.commitOffsets(GROUP, leader, generationId - 1, [entry(0, 8n)])).toBe(ErrorCode.ILLEGAL_GENERATION)
    expect(await h.coordinator.commitOffsets(GROUP, 'stranger', generationId, [entry(0, 8n)])).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    expect(await h.coordinator.commitOffsets(GROUP, '', -1, [entry(0, 8n)])).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    expect(h.coordinator.offsets.get(GROUP, 'orders', 0)?.offset).toBe(7n)
  })

  it('refuses commits while the leader computes the assignment (REBALANCE_IN_PROGRESS)', async () => {
    const h = await harness()
    const a = await h.joinNew()
    const joined = await a.joined
    expect(h.coordinator.group(GROUP)!.state).toBe('CompletingRebalance')
    expect(await h.coordinator.commitOffsets(GROUP, a.memberId, joined.generationId, [entry(0, 1n)])).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
  })

  it('commits survive a restart: they are replayed from __consumer_offsets-0, the latest winning', async () => {
    let h = await harness()
    await h.coordinator.commitOffsets('g1', '', -1, [entry(0, 1n), entry(1, 2n)])
    await h.coordinator.commitOffsets('g1', '', -1, [entry(0, 5n)])
    await h.coordinator.commitOffsets('g2', '', -1, [{ ...entry(0, 9n), metadata: null, leaderEpoch: -1 }])
    h = await h.restart()
    expect(h.coordinator.offsets.get('g1', 'orders', 0)).toEqual({ topic: 'orders', partition: 0, offset: 5n, leaderEpoch: 3, metadata: 'm5', commitTimestamp: 1_700_000_000_000n })
    expect(h.coordinator.offsets.get('g1', 'orders', 1)?.offset).toBe(2n)
    expect(h.coordinator.offsets.get('g2', 'orders', 0)).toMatchObject({ offset: 9n, leaderEpoch: -1, metadata: null })
    expect(
      h.coordinator
        .listGroups()
        .map((g) => [g.groupId, g.state])
        .sort(),
    ).toEqual([
      ['g1', 'Empty'],
      ['g2', 'Empty'],
    ])
    expect(OFFSETS_TOPIC).toBe('__consumer_offsets')
  })

  it.each(['js', 'native'] as const)('the log cleaner compacts the offsets log to its live offsets as commits pile up, and a restart loads exactly them (%s backend)', async (backend) => {
    let h = await harness({ cleaner: {}, backend })
    for (let i = 0; i < 1000; i++) {
      expect(await h.coordinator.commitOffsets('g1', '', -1, [entry(i % 2, BigInt(i))])).toBe(ErrorCode.NONE)
      if (i % 10 === 0) expect(await h.coordinator.commitOffsets('g2', '', -1, [entry(0, BigInt(i))])).toBe(ErrorCode.NONE)
    }
    let log = h.logManager.getLog(OFFSETS_TOPIC, 0)!
    const before = offsetsLogShape(log)
    expect(before.records).toBe(1100)
    expect(before.segments).toBeGreaterThan(10)
    expect(await h.cleanOffsetsLog()).toBeGreaterThan(0)
    const after = offsetsLogShape(log)
    // The three live offsets are what is left, at their own offsets; the start did not move.
    expect(after.records).toBe(3)
    expect(after.offsets).toEqual([1090n, 1098n, 1099n])
    expect(after.bytes).toBeLessThan(before.bytes / 20)
    // (Each cleaned segment stays one, empty or not; the round rolled one new active segment.)
    expect(after.segments).toBeLessThanOrEqual(before.segments + 1)
    expect(log.logStartOffset()).toBe(0n)
    expect(log.logEndOffset()).toBe(1100n)
    expect(h.logManager.cleaner!.manager.allCleanerCheckpoints().get(`${OFFSETS_TOPIC}-0`)).toBe(1100n)
    h = await h.restart()
    const expected = () => {
      expect(h.coordinator.offsets.get('g1', 'orders', 0)).toEqual({ topic: 'orders', partition: 0, offset: 998n, leaderEpoch: 3, metadata: 'm998', commitTimestamp: 1_700_000_000_000n })
      expect(h.coordinator.offsets.get('g1', 'orders', 1)?.offset).toBe(999n)
      expect(h.coordinator.offsets.get('g2', 'orders', 0)?.offset).toBe(990n)
      expect(h.coordinator.offsets.all('g1').length).toBe(2)
      expect(
        h.coordinator
          .listGroups()
          .map((g) => g.groupId)
          .sort(),
      ).toEqual(['g1', 'g2'])
    }
    expected()
    // Commits after the cleaning, cleaned again over the cleaned section: the later win.
    for (let i = 0; i < 100; i++) expect(await h.coordinator.commitOffsets('g1', '', -1, [entry(1, BigInt(2000 + i))])).toBe(ErrorCode.NONE)
    expect(await h.cleanOffsetsLog()).toBeGreaterThan(0)
    log = h.logManager.getLog(OFFSETS_TOPIC, 0)!
    expect(offsetsLogShape(log).offsets).toEqual([1090n, 1098n, 1199n])
    h = await h.restart()
    expect(h.coordinator.offsets.get('g1', 'orders', 1)?.offset).toBe(2099n)
    expect(h.coordinator.offsets.get('g1', 'orders', 0)?.offset).toBe(998n)
  })

  it('leaves an offsets log of only live offsets as it was (nothing to remove)', async () => {
    let h = await harness({ cleaner: {} })
    for (let p = 0; p < 300; p++) await h.coordinator.commitOffsets('wide', '', -1, [entry(p, 1n)])
    const log = h.logManager.getLog(OFFSETS_TOPIC, 0)!
    await h.cleanOffsetsLog()
    expect(offsetsLogShape(log).records).toBe(300)
    h = await h.restart()
    expect(h.coordinator.offsets.all('wide')).toHaveLength(300)
  })

  it('writes keys and values in the documented layout (Kafka OffsetCommitKey v1, OffsetCommitValue v3)', () => {
    const key = encodeOffsetKey('g', 'tp', 7)
    expect(key.toString('hex')).toBe('0001' + '0001' + '67' + '0002' + '7470' + '00000007')
    expect(decodeOffsetKey(key)).toEqual({ group: 'g', topic: 'tp', partition: 7 })
    const value = encodeOffsetValue({ offset: 42n, leaderEpoch: 2, metadata: null, commitTimestamp: 5n })
    expect(value.toString('hex')).toBe('0003' + '000000000000002a' + '00000002' + 'ffff' + '0000000000000005')
    expect(decodeOffsetValue(value)).toEqual({ offset: 42n, leaderEpoch: 2, metadata: null, commitTimestamp: 5n })
  })

  it('skips records of the offsets log that are not commits when replaying, and keeps the rest', async () => {
    let h = await harness()
    await h.coordinator.commitOffsets('g1', '', -1, [entry(0, 1n)])
    // (A record without a key cannot be there: the log is compacted, its leader refuses one.)
    const log = h.logManager.getLog(OFFSETS_TOPIC, 0)!
    expect(() => log.append([{ key: null, value: 'x' }])).toThrow(/cannot accept message without key/)
    log.append([
      { key: 'not a commit', value: 'garbage' },
      { key: Buffer.from([0, 9]), value: 'unknown key version' },
    ])
    await h.coordinator.commitOffsets('g1', '', -1, [entry(1, 2n)])
    h = await h.restart()
    expect(h.coordinator.offsets.all('g1').map((e) => [e.partition, e.offset])).toEqual([
      [0, 1n],
      [1, 2n],
    ])
  })
})
