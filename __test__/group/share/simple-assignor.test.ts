/**
 * The simple assignor of share groups (ts/group/share/simple-assignor.ts, Kafka's SimpleAssignor):
 * balance (sharing ceil(members / partitions), counts within one of each other), several members
 * per partition when members outnumber partitions, stickiness of the current target, only
 * subscribed topics, only assignable (initialized) partitions, and per-topic balance when the
 * members subscribe to different topics.
 */
import { describe, expect, it } from 'vitest'
import type { Assignment } from '../../../ts/group/consumer/assignment.js'
import { SimpleAssignor } from '../../../ts/group/share/simple-assignor.js'

const T1 = 'aa'.repeat(16)
const T2 = 'bb'.repeat(16)
const PARTITIONS: Record<string, number> = { [T1]: 6, [T2]: 3 }
const topics = { numPartitions: (t: string) => PARTITIONS[t] ?? -1 }

function member(memberId: string, subscribed: string[], assignment: Assignment = new Map()) {
  return { memberId, instanceId: null, rackId: null, subscribedTopicIds: new Set(subscribed), assignment }
}

const parts = (a: Assignment | undefined, topic = T1): number[] => [...(a?.get(topic) ?? [])].sort((x, y) => x - y)
const size = (a: Assignment | undefined): number => [...(a?.values() ?? [])].reduce((n, s) => n + s.size, 0)

describe('SimpleAssignor', () => {
  const assignor = new SimpleAssignor()

  it('is named simple', () => {
    expect(assignor.name).toBe('simple')
  })

  it('one member gets every partition of its topic', () => {
    const out = assignor.assign({ members: [member('m1', [T1])] }, topics)
    expect(parts(out.get('m1'))).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('two members split six partitions three and three, each partition once', () => {
    const out = assignor.assign({ members: [member('m1', [T1]), member('m2', [T1])] }, topics)
    expect(size(out.get('m1'))).toBe(3)
    expect(size(out.get('m2'))).toBe(3)
    expect([...parts(out.get('m1')), ...parts(out.get('m2'))].sort()).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('more members than partitions: every member gets a partition, each partition shared by ceil(members/partitions)', () => {
    const members = ['m1', 'm2', 'm3', 'm4', 'm5'].map((m) => member(m, [T2]))
    const out = assignor.assign({ members }, topics)
    const holders = new Map<number, number>()
    for (const m of members) {
      expect(size(out.get(m.memberId))).toBeGreaterThanOrEqual(1)
      for (const p of parts(out.get(m.memberId), T2)) holders.set(p, (holders.get(p) ?? 0) + 1)
    }
    expect([...holders.keys()].sort()).toEqual([0, 1, 2])
    for (const n of holders.values()) expect(n).toBeLessThanOrEqual(2)
    expect([...holders.values()].reduce((a, b) => a + b, 0)).toBe(6)
  })

  it('keeps a member its current partitions when they are balanced (stickiness)', () => {
    const current = new Map([[T1, new Set([3, 4, 5])]])
    const out = assignor.assign({ members: [member('m1', [T1], current), member('m2', [T1])] }, topics)
    expect(parts(out.get('m1'))).toEqual([3, 4, 5])
    expect(parts(out.get('m2'))).toEqual([0, 1, 2])
  })

  it('takes partitions from an overfilled member for a new one', () => {
    const current = new Map([[T1, new Set([0, 1, 2, 3, 4, 5])]])
    const out = assignor.assign({ members: [member('m1', [T1], current), member('m2', [T1])] }, topics)
    expect(size(out.get('m1'))).toBe(3)
    expect(size(out.get('m2'))).toBe(3)
    expect(parts(out.get('m1')).every((p) => current.get(T1)!.has(p))).toBe(true)
  })

  it('drops topics a member no longer subscribes to', () => {
    const current = new Map([
      [T1, new Set([0, 1])],
      [T2, new Set([0])],
    ])
    const out = assignor.assign({ members: [member('m1', [T2], current)] }, topics)
    expect(out.get('m1')!.has(T1)).toBe(false)
    expect(parts(out.get('m1'), T2)).toEqual([0, 1, 2])
  })

  it('assigns only the partitions that are assignable (share state initialized)', () => {
    const out = assignor.assign({ members: [member('m1', [T1])] }, topics, (_t, p) => p < 2)
    expect(parts(out.get('m1'))).toEqual([0, 1])
    const none = assignor.assign({ members: [member('m1', [T1])] }, topics, () => false)
    expect(size(none.get('m1'))).toBe(0)
  })

  it('heterogeneous subscriptions balance each topic among its subscribers', () => {
    const out = assignor.assign({ members: [member('m1', [T1]), member('m2', [T2]), member('m3', [T1, T2])] }, topics)
    expect(parts(out.get('m1'), T2)).toEqual([])
    expect(parts(out.get('m2'), T1)).toEqual([])
    expect(parts(out.get('m1')).length + parts(out.get('m3')).length).toBe(6)
    expect(parts(out.get('m1')).length).toBe(3)
    expect(parts(out.get('m2'), T2).length + parts(out.get('m3'), T2).length).toBe(3)
  })

  it('a member subscribed to nothing that exists gets nothing; an unknown topic id is an error', () => {
    expect(size(assignor.assign({ members: [member('m1', [])] }, topics).get('m1'))).toBe(0)
    expect(() => assignor.assign({ members: [member('m1', ['cc'.repeat(16)])] }, topics)).toThrow(/doesn't exist in the topic metadata/)
  })
})
