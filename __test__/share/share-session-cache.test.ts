/**
 * ShareSessionCache (ts/share/share-session-cache.ts): sessions per (group, member), Kafka's
 * epoch sequence, the session limit, and sessions going with their connection (their member's
 * records released through the callback).
 */
import { describe, expect, it } from 'vitest'
import { nextEpoch, ShareSessionCache, type ShareSession } from '../../ts/share/share-session-cache.js'

const p = (partition: number) => ({ topicId: 'ab', topic: 't', partition })

describe('ShareSessionCache', () => {
  it('epochs: 0 opens, then 1, 2, ... wrapping to 1; -1 stays final', () => {
    expect([nextEpoch(0), nextEpoch(1), nextEpoch(41), nextEpoch(0x7fffffff), nextEpoch(-1)]).toEqual([1, 2, 42, 1, -1])
  })

  it('a new session replaces the member’s previous one and starts at epoch 1 with its partitions', () => {
    const cache = new ShareSessionCache(10, () => {})
    const first = cache.maybeCreateSession('g', 'm', [p(0)], 'c1')!
    first.epoch = 5
    const second = cache.maybeCreateSession('g', 'm', [p(1), p(2)], 'c1')!
    expect(cache.get('g', 'm')).toBe(second)
    expect(second.epoch).toBe(1)
    expect([...second.partitions.keys()]).toEqual(['ab:1', 'ab:2'])
    second.update([p(3)], [p(1)])
    expect([...second.partitions.keys()]).toEqual(['ab:2', 'ab:3'])
    expect(cache.size()).toBe(1)
  })

  it('past the limit no session is made (SHARE_SESSION_LIMIT_REACHED), but a member may replace its own', () => {
    const cache = new ShareSessionCache(2, () => {})
    expect(cache.maybeCreateSession('g', 'a', [], 'c')).not.toBeNull()
    expect(cache.maybeCreateSession('g', 'b', [], 'c')).not.toBeNull()
    expect(cache.maybeCreateSession('g', 'c', [], 'c')).toBeNull()
    expect(cache.maybeCreateSession('g', 'a', [], 'c')).not.toBeNull()
  })

  it("a closed connection takes its sessions with it and reports each; others' stay", () => {
    const closed: ShareSession[] = []
    const cache = new ShareSessionCache(10, (s) => closed.push(s))
    cache.maybeCreateSession('g', 'a', [p(0)], 'c1')
    cache.maybeCreateSession('g', 'b', [p(0)], 'c2')
    cache.maybeCreateSession('h', 'a', [p(0)], 'c1')
    cache.connectionClosed('c1')
    expect(closed.map((s) => `${s.groupId}/${s.memberId}`)).toEqual(['g/a', 'h/a'])
    expect(cache.get('g', 'b')).toBeDefined()
    expect(cache.size()).toBe(1)
  })
})
