/**
 * DeleteGroups and OffsetDelete in the coordinator, by Kafka's rules (ClassicGroup's
 * validateDeleteGroup / validateOffsetDelete / isSubscribedToTopic), and their tombstones in the
 * offsets log: what was deleted stays deleted after a restart, on both storage engines.
 */
import { describe, expect, it } from 'vitest'
import { OFFSETS_TOPIC, type OffsetCommitEntry } from '../../ts/group/offsets-topic.js'
import { encodeSubscription } from '../../ts/protocol/consumer-protocol.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Log } from '../../ts/storage/log.js'
import { GROUP, harness, offsetsLogShape, stableGroupOfTwo } from './harness.js'

const entry = (topic: string, partition: number, offset: bigint): OffsetCommitEntry => ({ topic, partition, offset, leaderEpoch: -1, metadata: null, commitTimestamp: 1_700_000_000_000n })

const subscription = (topics: string[]) => [{ name: 'range', metadata: encodeSubscription({ topics, userData: null, ownedPartitions: [], generationId: -1, rackId: null }, 1) }]

describe('DeleteGroups', () => {
  it('deletes an Empty group and its offsets; NON_EMPTY_GROUP while it has members; GROUP_ID_NOT_FOUND for none; INVALID_GROUP_ID for ""', async () => {
    const h = await harness()
    await h.coordinator.commitOffsets('simple', '', -1, [entry('orders', 0, 5n), entry('orders', 1, 6n)])
    const { leader, generationId } = await stableGroupOfTwo(h)
    expect(await h.coordinator.commitOffsets(GROUP, leader, generationId, [entry('orders', 0, 7n)])).toBe(ErrorCode.NONE)
    expect(await h.coordinator.deleteGroups(['simple', GROUP, 'nope', '', 'simple'])).toEqual([
      { groupId: 'simple', errorCode: ErrorCode.NONE },
      { groupId: GROUP, errorCode: ErrorCode.NON_EMPTY_GROUP },
      { groupId: 'nope', errorCode: ErrorCode.GROUP_ID_NOT_FOUND },
      { groupId: '', errorCode: ErrorCode.INVALID_GROUP_ID },
    ])
    expect(h.coordinator.group('simple')).toBeUndefined()
    expect(h.coordinator.offsets.all('simple')).toEqual([])
    expect(h.coordinator.offsets.get(GROUP, 'orders', 0)?.offset).toBe(7n)
    // Deleted once, not found the second time.
    expect(await h.coordinator.deleteGroups(['simple'])).toEqual([{ groupId: 'simple', errorCode: ErrorCode.GROUP_ID_NOT_FOUND }])
  })

  it('a deleted group stays deleted after a restart, and its id can start over (both engines)', async () => {
    for (const backend of ['js', 'native'] as const) {
      let h = await harness({ backend })
      await h.coordinator.commitOffsets('gone', '', -1, [entry('orders', 0, 5n), entry('payments', 3, 9n)])
      await h.coordinator.commitOffsets('kept', '', -1, [entry('orders', 0, 1n)])
      expect(await h.coordinator.deleteGroups(['gone'])).toEqual([{ groupId: 'gone', errorCode: ErrorCode.NONE }])
      // One batch after the three commits: the two offsets' tombstones, then the group's (GroupMetadata, type 2), as Kafka writes them.
      const log = h.logManager.getLog(OFFSETS_TOPIC, 0)!
      const tombstones = log.readRecords(0n).filter((r) => r.value === null)
      expect(tombstones.map((r) => [r.offset, r.key!.readInt16BE(0)])).toEqual([
        [3n, 1],
        [4n, 1],
        [5n, 2],
      ])
      h = await h.restart()
      expect(h.coordinator.group('gone')).toBeUndefined()
      expect(h.coordinator.offsets.all('gone')).toEqual([])
      expect(h.coordinator.listGroups().map((g) => g.groupId)).toEqual(['kept'])
      expect(await h.coordinator.commitOffsets('gone', '', -1, [entry('orders', 0, 100n)])).toBe(ErrorCode.NONE)
      h = await h.restart()
      expect(h.coordinator.offsets.all('gone').map((e) => e.offset)).toEqual([100n])
    }
  })
})

describe('tombstones and the log cleaner', () => {
  it.each(['js', 'native'] as const)(
    'deleted groups stay deleted: their tombstones remove them on load until delete.retention.ms, then neither offsets nor tombstones are left (%s backend)',
    async (backend) => {
      let h = await harness({ cleaner: { deleteRetentionMs: 1000 }, backend })
      const wide = Array.from({ length: 60 }, (_, p) => entry('orders', p, BigInt(p)))
      expect(await h.coordinator.commitOffsets('wide', '', -1, wide)).toBe(ErrorCode.NONE)
      expect(await h.coordinator.commitOffsets('kept', '', -1, [entry('orders', 0, 7n)])).toBe(ErrorCode.NONE)
      for (let i = 0; i < 20; i++) expect(await h.coordinator.commitOffsets('gone', '', -1, [entry('orders', i % 3, BigInt(i))])).toBe(ErrorCode.NONE)
      // The commits are cleaned first; the deletions come after, in the dirty section.
      expect(await h.cleanOffsetsLog()).toBeGreaterThan(0)
      const log = () => h.logManager.getLog(OFFSETS_TOPIC, 0)!
      expect(offsetsLogShape(log()).records).toBe(64)
      expect(await h.coordinator.deleteGroups(['wide', 'gone'])).toEqual([
        { groupId: 'wide', errorCode: ErrorCode.NONE },
        { groupId: 'gone', errorCode: ErrorCode.NONE },
      ])
      h = await h.restart()
      expect(h.coordinator.listGroups().map((g) => g.groupId)).toEqual(['kept'])
      // Cleaned within delete.retention.ms: the tombstones are what is left of the deleted keys
      // (the offsets', and each group's GroupMetadata), and still remove them.
      const now = Date.now()
      expect(await h.cleanOffsetsLog(now)).toBeGreaterThan(0)
      expect(tombstones(log())).toBe(65)
      expect(offsetsLogShape(log()).records).toBe(66)
      h = await h.restart()
      expect(h.coordinator.listGroups().map((g) => g.groupId)).toEqual(['kept'])
      expect(h.coordinator.offsets.all('gone')).toEqual([])
      // A round past the horizon (something new to clean) drops them: the keys are simply gone.
      expect(await h.coordinator.commitOffsets('kept', '', -1, [entry('orders', 1, 8n)])).toBe(ErrorCode.NONE)
      expect(await h.cleanOffsetsLog(now + 60_000)).toBeGreaterThan(0)
      expect(tombstones(log())).toBe(0)
      expect(offsetsLogShape(log()).records).toBe(2)
      h = await h.restart()
      expect(h.coordinator.listGroups().map((g) => g.groupId)).toEqual(['kept'])
      expect(h.coordinator.offsets.all('kept').map((e) => [e.partition, e.offset])).toEqual([
        [0, 7n],
        [1, 8n],
      ])
    },
  )
})

/** The tombstones in the offsets log. */
function tombstones(log: Log): number {
  return log.readRecords(log.logStartOffset(), { maxBytes: 1 << 24, isolation: 'LOG_END' }).filter((r) => r.value === null).length
}

describe('OffsetDelete', () => {
  it('deletes the offsets of an Empty group, which is gone once it has none left', async () => {
    let h = await harness()
    await h.coordinator.commitOffsets('simple', '', -1, [entry('orders', 0, 5n), entry('orders', 1, 6n), entry('payments', 0, 7n)])
    const first = await h.coordinator.deleteOffsets('simple', [
      { topic: 'orders', partition: 1 },
      { topic: 'orders', partition: 9 }, // never committed: answered NONE, nothing written
    ])
    expect(first).toEqual({
      errorCode: ErrorCode.NONE,
      partitions: [
        { topic: 'orders', partition: 1, errorCode: ErrorCode.NONE },
        { topic: 'orders', partition: 9, errorCode: ErrorCode.NONE },
      ],
    })
    expect(
      h.coordinator.offsets
        .all('simple')
        .map((e) => `${e.topic}-${e.partition}`)
        .sort(),
    ).toEqual(['orders-0', 'payments-0'])
    h = await h.restart()
    expect(h.coordinator.offsets.get('simple', 'orders', 1)).toBeUndefined()
    expect(h.coordinator.offsets.get('simple', 'orders', 0)?.offset).toBe(5n)
    await h.coordinator.deleteOffsets('simple', [
      { topic: 'orders', partition: 0 },
      { topic: 'payments', partition: 0 },
    ])
    expect(h.coordinator.group('simple')).toBeUndefined()
    h = await h.restart()
    expect(h.coordinator.listGroups()).toEqual([])
  })

  it('GROUP_ID_NOT_FOUND for an unknown group, INVALID_GROUP_ID for ""', async () => {
    const h = await harness()
    expect(await h.coordinator.deleteOffsets('nope', [{ topic: 'orders', partition: 0 }])).toEqual({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitions: [] })
    expect(await h.coordinator.deleteOffsets('', [{ topic: 'orders', partition: 0 }])).toEqual({ errorCode: ErrorCode.INVALID_GROUP_ID, partitions: [] })
  })

  it('refuses the topics a live consumer group subscribes to (GROUP_SUBSCRIBED_TO_TOPIC), deletes the others', async () => {
    const h = await harness()
    const a = await h.joinNew({ protocols: subscription(['orders']) })
    const joined = await a.joined
    await h.sync(a.memberId, joined.generationId, [{ memberId: a.memberId, assignment: Buffer.alloc(0) }])
    expect(await h.coordinator.commitOffsets(GROUP, a.memberId, joined.generationId, [entry('orders', 0, 5n), entry('old', 0, 3n)])).toBe(ErrorCode.NONE)
    expect(
      await h.coordinator.deleteOffsets(GROUP, [
        { topic: 'orders', partition: 0 },
        { topic: 'old', partition: 0 },
      ]),
    ).toEqual({
      errorCode: ErrorCode.NONE,
      partitions: [
        { topic: 'orders', partition: 0, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC },
        { topic: 'old', partition: 0, errorCode: ErrorCode.NONE },
      ],
    })
    expect(h.coordinator.offsets.get(GROUP, 'orders', 0)?.offset).toBe(5n)
    expect(h.coordinator.offsets.get(GROUP, 'old', 0)).toBeUndefined()
    // Once the member has left, the group is Empty and subscribes to nothing.
    h.coordinator.leaveGroup(GROUP, [{ memberId: a.memberId, groupInstanceId: null }])
    expect(h.coordinator.group(GROUP)!.state).toBe('Empty')
    expect((await h.coordinator.deleteOffsets(GROUP, [{ topic: 'orders', partition: 0 }])).partitions[0].errorCode).toBe(ErrorCode.NONE)
    expect(h.coordinator.group(GROUP)).toBeUndefined()
  })

  it('a consumer group whose subscriptions do not parse is taken to consume every topic; a live group of another protocol type is NON_EMPTY_GROUP', async () => {
    const h = await harness()
    // The harness's members send "subscription" as metadata: not the consumer protocol.
    const { leader, generationId } = await stableGroupOfTwo(h)
    await h.coordinator.commitOffsets(GROUP, leader, generationId, [entry('anything', 0, 1n)])
    expect((await h.coordinator.deleteOffsets(GROUP, [{ topic: 'anything', partition: 0 }])).partitions[0].errorCode).toBe(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)

    const c = await h.joinNew({ groupId: 'connect', protocolType: 'connect' })
    await c.joined
    expect(await h.coordinator.deleteOffsets('connect', [{ topic: 'anything', partition: 0 }])).toEqual({ errorCode: ErrorCode.NON_EMPTY_GROUP, partitions: [] })
  })
})
