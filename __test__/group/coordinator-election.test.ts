/**
 * The group coordinator's election and resignation (Kafka's onElection / onResignation): not a
 * coordinator before it is elected (NOT_COORDINATOR), loading the offsets log once it is
 * (COORDINATOR_LOAD_IN_PROGRESS, a Heartbeat NONE), serving once loaded; a resignation drops
 * every group and offset and answers what it held NOT_COORDINATOR; epochs older than the
 * newest seen are ignored.
 */
import { describe, expect, it } from 'vitest'
import type { OffsetCommitEntry } from '../../ts/group/offsets-topic.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, isSettled } from './harness.js'

const entry = (partition: number, offset: bigint): OffsetCommitEntry => ({ topic: 'orders', partition, offset, leaderEpoch: 0, metadata: null, commitTimestamp: 1_700_000_000_000n })

describe('group coordinator election', () => {
  it('is not the coordinator before its election, loads when elected, and serves once loaded', async () => {
    const h = await harness()
    expect(await h.coordinator.commitOffsets('g1', '', -1, [entry(0, 42n)])).toBe(ErrorCode.NONE)
    // A coordinator over the same log, never elected.
    const fresh = await h.restart({ elect: false })
    const c = fresh.coordinator
    expect(c.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
    expect((await fresh.join()).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    expect(await c.commitOffsets('g1', '', -1, [entry(0, 43n)])).toBe(ErrorCode.NOT_COORDINATOR)
    expect(await c.deleteGroups(['g1'])).toEqual([{ groupId: 'g1', errorCode: ErrorCode.NOT_COORDINATOR }])
    expect(await c.deleteOffsets('g1', [{ topic: 'orders', partition: 0 }])).toEqual({ errorCode: ErrorCode.NOT_COORDINATOR, partitions: [] })
    expect(c.heartbeat('g1', 'm', 1)).toBe(ErrorCode.NOT_COORDINATOR)
    expect(c.leaveGroup('g1', [{ memberId: 'm', groupInstanceId: null }])).toEqual({ errorCode: ErrorCode.NOT_COORDINATOR, members: [] })
    expect(c.offsets.get('g1', 'orders', 0)).toBeUndefined()

    const loading = c.onElection(0, 0)
    expect(c.statusError()).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    expect((await fresh.join()).errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    expect(await c.commitOffsets('g1', '', -1, [entry(0, 43n)])).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    // Kafka answers a heartbeat blindly while loading.
    expect(c.heartbeat('g1', 'm', 1)).toBe(ErrorCode.NONE)
    await loading
    expect(c.statusError()).toBe(ErrorCode.NONE)
    expect(c.offsets.get('g1', 'orders', 0)?.offset).toBe(42n)
    expect(c.listGroups()).toEqual([{ groupId: 'g1', protocolType: '', state: 'Empty' }])
    expect(await c.commitOffsets('g1', '', -1, [entry(0, 43n)])).toBe(ErrorCode.NONE)
  })

  it('a resignation drops every group: held joins are answered NOT_COORDINATOR, and later requests too', async () => {
    const h = await harness({ initialRebalanceDelayMs: 60_000 })
    const c = h.coordinator
    expect(await c.commitOffsets('g1', '', -1, [entry(0, 7n)])).toBe(ErrorCode.NONE)
    // The first generation waits out the initial delay: the join is held.
    const member = await h.joinNew()
    expect(await isSettled(member.joined)).toBe(false)

    c.onResignation(0, 1)
    expect((await member.joined).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    expect(c.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
    expect(c.listGroups()).toEqual([])
    expect(c.group(GROUP)).toBeUndefined()
    expect(c.offsets.get('g1', 'orders', 0)).toBeUndefined()
    expect(c.offsets.isLoaded).toBe(false)
    expect((await h.join()).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    expect(await c.commitOffsets('g1', '', -1, [entry(0, 8n)])).toBe(ErrorCode.NOT_COORDINATOR)

    // Elected again in a newer epoch: the offsets come back from the log, their groups Empty.
    await c.onElection(0, 2)
    expect(c.statusError()).toBe(ErrorCode.NONE)
    expect(c.offsets.get('g1', 'orders', 0)?.offset).toBe(7n)
    expect(c.listGroups()).toEqual([{ groupId: 'g1', protocolType: '', state: 'Empty' }])
  })

  it('ignores elections and resignations older than the newest epoch it saw, and other partitions', async () => {
    const h = await harness()
    const c = h.coordinator
    await c.onElection(0, 5)
    expect(c.statusError()).toBe(ErrorCode.NONE)
    expect(await c.commitOffsets('g1', '', -1, [entry(0, 1n)])).toBe(ErrorCode.NONE)
    // A resignation of an older epoch (a stale metadata change) changes nothing.
    c.onResignation(0, 4)
    expect(c.statusError()).toBe(ErrorCode.NONE)
    c.onResignation(3)
    expect(c.statusError()).toBe(ErrorCode.NONE)
    expect(c.offsets.get('g1', 'orders', 0)?.offset).toBe(1n)
    c.onResignation(0, 5)
    expect(c.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
    // An election in an epoch already seen does not bring it back.
    await c.onElection(0, 5)
    expect(c.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
    await c.onElection(1, 9)
    expect(c.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
    // onLeadershipChange calls for the offsets topic only.
    c.onLeadershipChange([{ topic: 'orders', partition: 0, leaderEpoch: 9 }], [])
    expect(c.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
    c.onLeadershipChange([{ topic: '__consumer_offsets', partition: 0, leaderEpoch: 6 }], [])
    expect(c.statusError()).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    for (let i = 0; i < 100 && c.statusError() !== ErrorCode.NONE; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(c.statusError()).toBe(ErrorCode.NONE)
    c.onLeadershipChange([], [{ topic: '__consumer_offsets', partition: 0, leaderEpoch: 7 }])
    expect(c.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
  })

  it('a resignation while loading abandons the load', async () => {
    const h = await harness({ elect: false })
    const loading = h.coordinator.onElection(0, 3)
    h.coordinator.onResignation(0, 3)
    await loading
    expect(h.coordinator.statusError()).toBe(ErrorCode.NOT_COORDINATOR)
    expect(h.coordinator.offsets.isLoaded).toBe(false)
  })
})
