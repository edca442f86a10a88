import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, isSettled, REBALANCE_TIMEOUT_MS } from './harness.js'

describe('SyncGroup', () => {
  it("followers wait for the leader's assignment, each gets its own, and the group is Stable", async () => {
    const h = await harness({ initialRebalanceDelayMs: 10 })
    const a = await h.joinNew()
    const b = await h.joinNew()
    h.advance(10)
    h.advance(10)
    const [aJoin, bJoin] = await Promise.all([a.joined, b.joined])
    const leader = aJoin.members.length > 0 ? aJoin : bJoin
    const follower = leader === aJoin ? bJoin : aJoin
    const followerSync = h.sync(follower.memberId, follower.generationId)
    expect(await isSettled(followerSync)).toBe(false)
    const leaderSync = await h.sync(leader.memberId, leader.generationId, [
      { memberId: leader.memberId, assignment: Buffer.from('for the leader') },
      { memberId: follower.memberId, assignment: Buffer.from('for the follower') },
    ])
    expect(leaderSync).toMatchObject({ errorCode: ErrorCode.NONE, protocolName: 'range', protocolType: 'consumer' })
    expect(leaderSync.assignment.toString()).toBe('for the leader')
    expect((await followerSync).assignment.toString()).toBe('for the follower')
    expect(h.coordinator.group(GROUP)!.state).toBe('Stable')
    // A late SyncGroup in a Stable group is answered with the member's assignment at once.
    expect((await h.sync(follower.memberId, follower.generationId)).assignment.toString()).toBe('for the follower')
  })

  it('a wrong generation is ILLEGAL_GENERATION, an unknown member UNKNOWN_MEMBER_ID, a rebalance REBALANCE_IN_PROGRESS', async () => {
    const h = await harness()
    const a = await h.joinNew()
    const aJoin = await a.joined
    expect((await h.sync(a.memberId, aJoin.generationId + 1)).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION)
    expect((await h.sync('nobody', aJoin.generationId)).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    await h.sync(a.memberId, aJoin.generationId, [])
    const b = await h.joinNew()
    expect(h.coordinator.group(GROUP)!.state).toBe('PreparingRebalance')
    expect((await h.sync(a.memberId, aJoin.generationId)).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    void b.joined
  })

  it('a rebalance while the leader computes the assignment answers waiting followers REBALANCE_IN_PROGRESS', async () => {
    const h = await harness({ initialRebalanceDelayMs: 10 })
    const a = await h.joinNew()
    const b = await h.joinNew()
    h.advance(10)
    h.advance(10)
    const [aJoin, bJoin] = await Promise.all([a.joined, b.joined])
    const follower = aJoin.members.length > 0 ? bJoin : aJoin
    const waiting = h.sync(follower.memberId, follower.generationId)
    const c = await h.joinNew()
    expect((await waiting).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    expect(h.coordinator.group(GROUP)!.state).toBe('PreparingRebalance')
    void c.joined
  })

  it('a member that sends no SyncGroup within the rebalance timeout is removed and the group rebalances', async () => {
    const h = await harness({ initialRebalanceDelayMs: 10 })
    const a = await h.joinNew()
    const b = await h.joinNew()
    h.advance(10)
    h.advance(10)
    const [aJoin, bJoin] = await Promise.all([a.joined, b.joined])
    const leader = aJoin.members.length > 0 ? aJoin : bJoin
    const follower = leader === aJoin ? bJoin : aJoin
    await h.sync(leader.memberId, leader.generationId, [])
    expect(h.coordinator.group(GROUP)!.state).toBe('Stable')
    // The follower heartbeats (its session is alive) but never syncs.
    for (let waited = 0; waited < REBALANCE_TIMEOUT_MS; waited += 5000) {
      expect(h.coordinator.heartbeat(GROUP, follower.memberId, follower.generationId)).toBe(ErrorCode.NONE)
      expect(h.coordinator.heartbeat(GROUP, leader.memberId, leader.generationId)).toBe(ErrorCode.NONE)
      h.advance(5000)
    }
    const group = h.coordinator.group(GROUP)!
    expect(group.has(follower.memberId)).toBe(false)
    expect(group.state).toBe('PreparingRebalance')
    const rejoin = await h.join({ memberId: leader.memberId })
    expect(rejoin.members.map((m) => m.memberId)).toEqual([leader.memberId])
  })
})
