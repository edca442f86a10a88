import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, REBALANCE_TIMEOUT_MS } from './harness.js'

describe('static membership (group.instance.id, KIP-345)', () => {
  it('a static member joins without MEMBER_ID_REQUIRED, named after its instance id', async () => {
    const h = await harness()
    const joined = await h.join({ groupInstanceId: 'pod-1' })
    expect(joined.errorCode).toBe(ErrorCode.NONE)
    expect(joined.memberId).toMatch(/^pod-1-/)
    expect(h.coordinator.group(GROUP)!.staticMembers.get('pod-1')).toBe(joined.memberId)
  })

  it('a static member back with no member id takes a new one without a rebalance; the old id is fenced', async () => {
    const h = await harness()
    const a = await h.join({ groupInstanceId: 'pod-1' })
    await h.sync(a.memberId, a.generationId, [{ memberId: a.memberId, assignment: Buffer.from('p0') }])
    const back = await h.join({ groupInstanceId: 'pod-1' })
    expect(back).toMatchObject({ errorCode: ErrorCode.NONE, generationId: a.generationId, leader: a.memberId, members: [] })
    expect(back.memberId).not.toBe(a.memberId)
    const group = h.coordinator.group(GROUP)!
    expect(group.state).toBe('Stable')
    expect(group.leaderId).toBe(back.memberId)
    const sync = await h.coordinator.syncGroup({
      groupId: GROUP,
      generationId: back.generationId,
      memberId: back.memberId,
      groupInstanceId: 'pod-1',
      protocolType: null,
      protocolName: null,
      assignments: [],
    })
    expect(sync.assignment.toString()).toBe('p0')
    expect(h.coordinator.heartbeat(GROUP, a.memberId, a.generationId, 'pod-1')).toBe(ErrorCode.FENCED_INSTANCE_ID)
    expect(h.coordinator.heartbeat(GROUP, back.memberId, a.generationId, 'pod-1')).toBe(ErrorCode.NONE)
    expect(await h.coordinator.commitOffsets(GROUP, a.memberId, a.generationId, [], 'pod-1')).toBe(ErrorCode.FENCED_INSTANCE_ID)
  })

  it('a static member that does not rejoin stays through a rebalance; a dynamic one would leave', async () => {
    const h = await harness({ initialRebalanceDelayMs: 10 })
    const s = h.join({ groupInstanceId: 'pod-1' })
    const d = await h.joinNew()
    h.advance(10)
    h.advance(10)
    const [sJoin, dJoin] = await Promise.all([s, d.joined])
    await Promise.all([h.sync(sJoin.memberId, sJoin.generationId, []), h.sync(dJoin.memberId, dJoin.generationId, [])])
    const c = await h.joinNew()
    const dRejoin = h.join({ memberId: d.memberId })
    // The static member keeps heartbeating but does not rejoin before the rebalance timeout.
    for (let waited = 0; waited < REBALANCE_TIMEOUT_MS; waited += 5000) {
      h.coordinator.heartbeat(GROUP, sJoin.memberId, sJoin.generationId, 'pod-1')
      h.advance(5000)
    }
    const [cJoin] = await Promise.all([c.joined, dRejoin])
    expect(h.coordinator.group(GROUP)!.has(sJoin.memberId)).toBe(true)
    expect(cJoin.generationId).toBe(sJoin.generationId + 1)
    const leader = [cJoin, await dRejoin].find((r) => r.members.length > 0)!
    expect(leader.members.map((m) => m.memberId)).toContain(sJoin.memberId)
  })

  it('a static member closed without LeaveGroup leaves when its own 5 s session ends; the Empty group can then be deleted', async () => {
    const h = await harness()
    const a = await h.join({ groupInstanceId: 'pod-1', sessionTimeoutMs: 5000 })
    await h.sync(a.memberId, a.generationId, [])
    h.advance(4999)
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NON_EMPTY_GROUP }])
    h.advance(1)
    const group = h.coordinator.group(GROUP)!
    expect(group.members.size).toBe(0)
    expect(group.state).toBe('Empty')
    // Kafka keeps the Empty group (no offsets) until its cleanup; DeleteGroups deletes it.
    expect(h.coordinator.listGroups()).toEqual([{ groupId: GROUP, protocolType: 'consumer', state: 'Empty' }])
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NONE }])
    expect(h.coordinator.group(GROUP)).toBeUndefined()
  })

  it('LeaveGroup removes a static member by its instance id alone; a stale member id is fenced', async () => {
    const h = await harness()
    const a = await h.join({ groupInstanceId: 'pod-1' })
    await h.sync(a.memberId, a.generationId, [])
    const back = await h.join({ groupInstanceId: 'pod-1' })
    const stale = h.coordinator.leaveGroup(GROUP, [{ memberId: a.memberId, groupInstanceId: 'pod-1' }])
    expect(stale.members[0].errorCode).toBe(ErrorCode.FENCED_INSTANCE_ID)
    const byInstance = h.coordinator.leaveGroup(GROUP, [{ memberId: '', groupInstanceId: 'pod-1' }])
    expect(byInstance.members[0].errorCode).toBe(ErrorCode.NONE)
    expect(h.coordinator.group(GROUP)!.members.size).toBe(0)
    expect(back.errorCode).toBe(ErrorCode.NONE)
  })
})
