import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, SESSION_TIMEOUT_MS, stableGroupOfTwo } from './harness.js'

describe('Heartbeat and sessions', () => {
  it('answers NONE in a Stable group, ILLEGAL_GENERATION for another generation, UNKNOWN_MEMBER_ID for strangers', async () => {
    const h = await harness()
    const { leader, generationId } = await stableGroupOfTwo(h)
    expect(h.coordinator.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.NONE)
    expect(h.coordinator.heartbeat(GROUP, leader, generationId - 1)).toBe(ErrorCode.ILLEGAL_GENERATION)
    expect(h.coordinator.heartbeat(GROUP, 'nobody', generationId)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    expect(h.coordinator.heartbeat('no-such-group', leader, generationId)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
  })

  it('tells members REBALANCE_IN_PROGRESS while the group prepares a rebalance', async () => {
    const h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    const c = await h.joinNew()
    expect(h.coordinator.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    expect(h.coordinator.heartbeat(GROUP, follower, generationId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    void c.joined
  })

  it('a member silent for its session timeout is removed by the sweep and the group rebalances without it', async () => {
    const h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    h.advance(SESSION_TIMEOUT_MS / 2)
    expect(h.coordinator.heartbeat(GROUP, leader, generationId)).toBe(ErrorCode.NONE)
    h.advance(SESSION_TIMEOUT_MS / 2) // the follower's session is over; the leader's is not
    const group = h.coordinator.group(GROUP)!
    expect([...group.members.keys()]).toEqual([leader])
    expect(group.state).toBe('PreparingRebalance')
    expect(h.coordinator.heartbeat(GROUP, follower, generationId)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    const rejoin = await h.join({ memberId: leader })
    expect(rejoin).toMatchObject({ errorCode: ErrorCode.NONE, generationId: generationId + 1, leader })
    expect(rejoin.members.map((m) => m.memberId)).toEqual([leader])
  })

  it('members waiting in a rebalance are kept alive past their session timeout', async () => {
    const h = await harness()
    const { leader, follower, generationId } = await stableGroupOfTwo(h)
    const c = await h.joinNew()
    const leaderJoin = h.join({ memberId: leader })
    h.advance(SESSION_TIMEOUT_MS + 1) // the follower never heartbeats nor rejoins; the leader waits
    const group = h.coordinator.group(GROUP)!
    expect(group.has(follower)).toBe(false)
    expect((await leaderJoin).generationId).toBe(generationId + 1)
    expect((await c.joined).generationId).toBe(generationId + 1)
  })

  it('a member id given with MEMBER_ID_REQUIRED is forgotten when it does not come back within the session timeout', async () => {
    const h = await harness()
    const first = await h.join()
    expect(h.coordinator.group(GROUP)!.pendingMembers.has(first.memberId)).toBe(true)
    h.advance(SESSION_TIMEOUT_MS)
    expect(h.coordinator.group(GROUP)!.pendingMembers.size).toBe(0)
    expect((await h.join({ memberId: first.memberId })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
  })

  it('an Empty group without offsets stays until the cleanup of offsets.retention.check.interval.ms, as in Kafka', async () => {
    const h = await harness()
    const a = await h.join({ requireKnownMemberId: false })
    await h.sync(a.memberId, a.generationId, [])
    h.coordinator.leaveGroup(GROUP, [{ memberId: a.memberId, groupInstanceId: null }])
    expect(h.coordinator.group(GROUP)!.state).toBe('Empty')
    h.advance(599_000)
    expect(h.coordinator.group(GROUP)!.state).toBe('Empty')
    h.advance(1000)
    expect(h.coordinator.group(GROUP)).toBeUndefined()
  })
})
