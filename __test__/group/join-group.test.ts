import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, isSettled, REBALANCE_TIMEOUT_MS } from './harness.js'

describe('JoinGroup', () => {
  it('a v4+ member without an id is told MEMBER_ID_REQUIRED with a `${clientId}-${uuid}` id, and joins with it', async () => {
    const h = await harness()
    const first = await h.join({ clientId: 'my-app' })
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED)
    expect(first.memberId).toMatch(/^my-app-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(h.coordinator.group(GROUP)!.members.size).toBe(0)
    const second = await h.join({ clientId: 'my-app', memberId: first.memberId })
    expect(second).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 1, memberId: first.memberId, leader: first.memberId, protocolName: 'range' })
    expect(second.members.map((m) => m.memberId)).toEqual([first.memberId])
  })

  it('a v0-3 member is given its id and joins at once', async () => {
    const h = await harness()
    const joined = await h.join({ requireKnownMemberId: false })
    expect(joined.errorCode).toBe(ErrorCode.NONE)
    expect(joined.memberId).toMatch(/^client-/)
    expect(joined.generationId).toBe(1)
  })

  it('JoinGroup answers are held until every known member has rejoined; only the leader gets the members', async () => {
    const h = await harness()
    const a = await h.joinNew()
    const first = await a.joined
    await h.sync(a.memberId, first.generationId, [])
    const b = await h.joinNew()
    expect(await isSettled(b.joined)).toBe(false)
    expect(h.coordinator.group(GROUP)!.state).toBe('PreparingRebalance')
    const aJoin = await h.join({ memberId: a.memberId })
    const bJoin = await b.joined
    expect(aJoin.generationId).toBe(2)
    expect(bJoin.generationId).toBe(2)
    expect(aJoin.leader).toBe(a.memberId)
    expect(aJoin.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort())
    expect(bJoin.members).toEqual([])
    expect(h.coordinator.group(GROUP)!.state).toBe('CompletingRebalance')
  })

  it('a member that does not rejoin before the rebalance timeout is removed', async () => {
    const h = await harness()
    const a = await h.joinNew()
    await h.sync(a.memberId, (await a.joined).generationId, [])
    const b = await h.joinNew()
    // a keeps heartbeating (told REBALANCE_IN_PROGRESS) but never rejoins.
    for (let waited = 0; waited < REBALANCE_TIMEOUT_MS - 1; waited += 5000) {
      h.advance(Math.min(5000, REBALANCE_TIMEOUT_MS - 1 - waited))
      expect(h.coordinator.heartbeat(GROUP, a.memberId, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    }
    expect(await isSettled(b.joined)).toBe(false)
    h.advance(1)
    const bJoin = await b.joined
    expect(bJoin).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 2, leader: b.memberId })
    expect([...h.coordinator.group(GROUP)!.members.keys()]).toEqual([b.memberId])
    expect(h.coordinator.heartbeat(GROUP, a.memberId, 2)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
  })

  it('group.initial.rebalance.delay.ms holds the first generation, once more after each new member, up to the rebalance timeout', async () => {
    const h = await harness({ initialRebalanceDelayMs: 3000 })
    const a = await h.joinNew()
    h.advance(2000)
    const b = await h.joinNew()
    h.advance(1000) // a's delay is over, but b came: wait one more delay
    expect(await isSettled(a.joined)).toBe(false)
    h.advance(2999)
    expect(await isSettled(a.joined)).toBe(false)
    h.advance(1)
    const [aJoin, bJoin] = await Promise.all([a.joined, b.joined])
    expect(aJoin.generationId).toBe(1)
    expect(bJoin.generationId).toBe(1)
    expect(aJoin.members).toHaveLength(2)
  })

  it('chooses the protocol all members support that most of them prefer', async () => {
    const h = await harness({ initialRebalanceDelayMs: 100 })
    const m = (names: string[]) => names.map((name) => ({ name, metadata: Buffer.from(name) }))
    const a = await h.joinNew({ protocols: m(['range', 'roundrobin', 'sticky']) })
    const b = await h.joinNew({ protocols: m(['sticky', 'roundrobin']) })
    const c = await h.joinNew({ protocols: m(['roundrobin', 'sticky']) })
    h.advance(100) // new members came during the delay: one more
    h.advance(100)
    const results = await Promise.all([a.joined, b.joined, c.joined])
    // Candidates: roundrobin and sticky; votes: a roundrobin, b sticky, c roundrobin.
    expect(results.map((r) => r.protocolName)).toEqual(['roundrobin', 'roundrobin', 'roundrobin'])
    const leader = results.find((r) => r.members.length > 0)!
    expect(leader.members.map((x) => x.metadata.toString())).toEqual(['roundrobin', 'roundrobin', 'roundrobin'])
  })

  it('a member with no protocol in common with the group is INCONSISTENT_GROUP_PROTOCOL', async () => {
    const h = await harness()
    await (
      await h.joinNew()
    ).joined
    const other = await h.join({ protocols: [{ name: 'other', metadata: Buffer.alloc(0) }] })
    expect(other.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    const wrongType = await h.join({ protocolType: 'connect' })
    expect(wrongType.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
  })

  it('an unknown member id is UNKNOWN_MEMBER_ID; a session timeout out of bounds is INVALID_SESSION_TIMEOUT', async () => {
    const h = await harness()
    expect((await h.join({ memberId: 'nobody' })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    expect((await h.join({ sessionTimeoutMs: 10 })).errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT)
    expect((await h.join({ groupId: '' })).errorCode).toBe(ErrorCode.INVALID_GROUP_ID)
    expect(h.coordinator.group(GROUP)).toBeUndefined()
  })

  it('a follower rejoining a Stable group with the same subscription gets the current generation at once', async () => {
    const h = await harness()
    const a = await h.joinNew()
    const first = await a.joined
    await h.sync(a.memberId, first.generationId, [])
    const b = await h.joinNew()
    await Promise.all([h.join({ memberId: a.memberId }), b.joined])
    await Promise.all([h.sync(a.memberId, 2, []), h.sync(b.memberId, 2)])
    const again = await h.join({ memberId: b.memberId })
    expect(again).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 2, members: [] })
    expect(h.coordinator.group(GROUP)!.state).toBe('Stable')
  })

  it('stopping the coordinator answers held joins with NOT_COORDINATOR, and later ones too', async () => {
    const h = await harness({ initialRebalanceDelayMs: 3000 })
    const a = await h.joinNew()
    expect(await isSettled(a.joined)).toBe(false)
    h.coordinator.stop()
    expect((await a.joined).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    expect((await h.join()).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
  })
})
