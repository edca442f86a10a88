import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, stableGroupOfTwo } from './harness.js'

describe('LeaveGroup', () => {
  it('a member leaving starts a rebalance; the one that stays rejoins alone', async () => {
    const h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    const result = h.coordinator.leaveGroup(GROUP, [{ memberId: follower, groupInstanceId: null }])
    expect(result).toEqual({ errorCode: ErrorCode.NONE, members: [{ memberId: follower, groupInstanceId: null, errorCode: ErrorCode.NONE }] })
    expect(h.coordinator.group(GROUP)!.state).toBe('PreparingRebalance')
    expect(h.coordinator.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    const rejoin = await h.join({ memberId: leader })
    expect(rejoin.generationId).toBe(generationId + 1)
    expect(rejoin.members.map((m) => m.memberId)).toEqual([leader])
  })

  it('leaves a batch of members (v3+), each with its own outcome; the last one out leaves the group Empty', async () => {
    const h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    const result = h.coordinator.leaveGroup(GROUP, [
      { memberId: leader, groupInstanceId: null },
      { memberId: 'stranger', groupInstanceId: null },
      { memberId: follower, groupInstanceId: null },
    ])
    expect(result.members.map((m) => m.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE])
    // No members and no committed offsets: the group is Empty (as in Kafka, until the cleanup forgets it).
    expect(h.coordinator.group(GROUP)!.state).toBe('Empty')
    expect(h.coordinator.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
  })

  it('a group with committed offsets stays, Empty, when its last member leaves', async () => {
    const h = await harness()
    const a = await h.joinNew()
    const joined = await a.joined
    await h.sync(a.memberId, joined.generationId, [])
    expect(await h.coordinator.commitOffsets(GROUP, a.memberId, joined.generationId, [{ topic: 't', partition: 0, offset: 5n, leaderEpoch: 0, metadata: null, commitTimestamp: 1n }])).toBe(
      ErrorCode.NONE,
    )
    h.coordinator.leaveGroup(GROUP, [{ memberId: a.memberId, groupInstanceId: null }])
    expect(h.coordinator.group(GROUP)!.state).toBe('Empty')
    expect(h.coordinator.group(GROUP)!.generationId).toBe(joined.generationId + 1)
    expect(h.coordinator.listGroups()).toEqual([{ groupId: GROUP, protocolType: 'consumer', state: 'Empty' }])
  })
})
