/**
 * Classic groups kept in the offsets log as Kafka's GroupMetadata records
 * (ts/group/group-metadata-records.ts): a Stable group comes back after a restart with its
 * members, generation, leader, protocol and assignments, and their sessions start again; a group
 * that empties is written Empty; a group deleted or forgotten leaves a tombstone and does not
 * come back.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS } from '../../ts/group/group-coordinator.js'
import { GROUP_METADATA_RECORD_TYPE, readGroupMetadataValue } from '../../ts/group/group-metadata-records.js'
import { OFFSETS_TOPIC } from '../../ts/group/offsets-topic.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { LogRecord } from '../../ts/protocol/record-types.js'
import { GROUP, harness, SESSION_TIMEOUT_MS, stableGroupOfTwo, type Harness } from './harness.js'

/** The GroupMetadata records of the offsets log, in order (null: a tombstone). */
function groupRecords(h: Harness): Array<ReturnType<typeof readGroupMetadataValue> | null> {
  const log = h.logManager.getLog(OFFSETS_TOPIC, 0)!
  return log
    .readRecords(log.logStartOffset(), { maxBytes: 1 << 24, isolation: 'LOG_END' })
    .filter((r: LogRecord) => r.key !== null && r.key.readInt16BE(0) === GROUP_METADATA_RECORD_TYPE)
    .map((r: LogRecord) => (r.value === null ? null : readGroupMetadataValue(r.value)))
}

describe('classic groups in the offsets log', () => {
  it('a Stable group comes back after a restart with its members, generation and assignments; heartbeats go on without a rejoin', async () => {
    let h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    const before = h.coordinator.describeGroup(GROUP)!
    // One record per completed rebalance: the generation with every member and its assignment.
    const records = groupRecords(h)
    expect(records.map((r) => [r?.generation, r?.members.length])).toEqual([
      [1, 1],
      [2, 2],
    ])
    expect(records[1]).toMatchObject({ protocolType: 'consumer', protocol: 'range', leader })
    expect(records[1]!.members.find((m) => m.memberId === follower)).toMatchObject({
      clientId: 'client',
      clientHost: '/127.0.0.1',
      sessionTimeout: SESSION_TIMEOUT_MS,
      rebalanceTimeout: 30_000,
      subscription: Buffer.from('subscription'),
      assignment: Buffer.from('F'),
    })

    h = await h.restart()
    const c = h.coordinator
    expect(c.describeGroup(GROUP)).toEqual(before)
    expect(c.group(GROUP)).toMatchObject({ state: 'Stable', generationId, leaderId: leader, protocolName: 'range' })
    expect(c.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.NONE)
    expect(c.heartbeat(GROUP, follower, generationId)).toBe(ErrorCode.NONE)
    expect(await h.sync(follower, generationId)).toMatchObject({ errorCode: ErrorCode.NONE, assignment: Buffer.from('F') })
    // A commit in the generation is accepted.
    const entry = { topic: 'orders', partition: 0, offset: 9n, leaderEpoch: 0, metadata: null, commitTimestamp: 1n }
    expect(await c.commitOffsets(GROUP, follower, generationId, [entry])).toBe(ErrorCode.NONE)

    // The sessions started again at the load: the member that keeps heartbeating stays, the other leaves.
    h.advance(SESSION_TIMEOUT_MS / 2)
    expect(c.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.NONE)
    h.advance(SESSION_TIMEOUT_MS / 2 + 1)
    expect(c.group(GROUP)!.has(follower)).toBe(false)
    expect(c.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
  })

  it('a group that empties is written Empty; forgotten without offsets, it leaves a tombstone and does not come back', async () => {
    let h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    expect(h.coordinator.leaveGroup(GROUP, [{ memberId: leader, groupInstanceId: null }]).errorCode).toBe(ErrorCode.NONE)
    // The other member's session ends: the join phase ends with no member.
    h.advance(SESSION_TIMEOUT_MS + 1)
    h.advance(30_001)
    expect(h.coordinator.group(GROUP)).toMatchObject({ state: 'Empty', generationId: generationId + 1 })
    await h.coordinator.offsets.idle()
    expect(groupRecords(h).at(-1)).toMatchObject({ generation: generationId + 1, protocolType: 'consumer', protocol: null, leader: null, members: [] })

    // Back Empty after a restart, at its generation.
    h = await h.restart()
    expect(h.coordinator.group(GROUP)).toMatchObject({ state: 'Empty', generationId: generationId + 1, protocolType: 'consumer' })
    expect(h.coordinator.heartbeat(GROUP, follower, generationId)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)

    // Kafka's cleanup forgets it (no offsets): its tombstone is written.
    h.advance(DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS + 1)
    expect(h.coordinator.group(GROUP)).toBeUndefined()
    await h.coordinator.offsets.idle()
    expect(groupRecords(h).at(-1)).toBeNull()
    h = await h.restart()
    expect(h.coordinator.group(GROUP)).toBeUndefined()
    expect(h.coordinator.listGroups()).toEqual([])
  })

  it('a deleted group leaves its tombstone after its offsets and does not come back', async () => {
    let h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    const entry = { topic: 'orders', partition: 0, offset: 4n, leaderEpoch: 0, metadata: null, commitTimestamp: 1n }
    expect(await h.coordinator.commitOffsets(GROUP, leader, generationId, [entry])).toBe(ErrorCode.NONE)
    h.coordinator.leaveGroup(GROUP, [
      { memberId: leader, groupInstanceId: null },
      { memberId: follower, groupInstanceId: null },
    ])
    expect(h.coordinator.group(GROUP)?.state).toBe('Empty')
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NONE }])
    expect(groupRecords(h).at(-1)).toBeNull()
    h = await h.restart()
    expect(h.coordinator.group(GROUP)).toBeUndefined()
    expect(h.coordinator.offsets.all(GROUP)).toEqual([])
  })

  it('a static member back with a new member id is written with it: after a restart the old id is fenced', async () => {
    let h = await harness()
    const first = await h.join({ groupInstanceId: 'instance-a' })
    expect(first.errorCode).toBe(ErrorCode.NONE)
    await h.sync(first.memberId, first.generationId, [{ memberId: first.memberId, assignment: Buffer.from('A') }])
    const again = await h.join({ groupInstanceId: 'instance-a' })
    expect(again).toMatchObject({ errorCode: ErrorCode.NONE, generationId: first.generationId })
    expect(again.memberId).not.toBe(first.memberId)
    h = await h.restart()
    const c = h.coordinator
    expect(c.heartbeat(GROUP, again.memberId, first.generationId, 'instance-a')).toBe(ErrorCode.NONE)
    expect(c.heartbeat(GROUP, first.memberId, first.generationId, 'instance-a')).toBe(ErrorCode.FENCED_INSTANCE_ID)
    expect(await h.sync(again.memberId, first.generationId)).toMatchObject({ errorCode: ErrorCode.NONE, assignment: Buffer.from('A') })
  })
})
