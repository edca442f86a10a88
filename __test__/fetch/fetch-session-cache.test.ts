/**
 * The fetch session cache's rules: ids, slots, and who may evict whom (idle LRU first, then
 * Kafka's EvictableKey order: privileged, then size; never FIFO).
 */
import { describe, expect, it } from 'vitest'
import { FETCH_SESSION_EVICTION_MS, FetchSession, FetchSessionCache, INVALID_SESSION_ID, newCachedPartition, nextEpoch, type CachedPartition } from '../../ts/fetch/fetch-session-cache.js'
import { ZERO_UUID } from '../../ts/protocol/apis/fetch.js'

function parts(n: number, topic = 't'): CachedPartition[] {
  return Array.from({ length: n }, (_, partition) =>
    newCachedPartition({ topic, topicId: ZERO_UUID, partition, fetchOffset: 0n, logStartOffset: -1n, maxBytes: 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }),
  )
}

/** A cache whose ids count up from 1, for readable expectations. */
function cache(maxEntries: number): FetchSessionCache {
  let id = 0
  return new FetchSessionCache({ maxEntries, randomId: () => ++id })
}

const IDLE = FETCH_SESSION_EVICTION_MS + 1

describe('fetch session epochs', () => {
  it('counts up from 1 and wraps from Int32.MAX to 1; FINAL_EPOCH stays final', () => {
    expect(nextEpoch(0)).toBe(1)
    expect(nextEpoch(41)).toBe(42)
    expect(nextEpoch(0x7fffffff)).toBe(1)
    expect(nextEpoch(-1)).toBe(-1)
  })

  it('a new session expects epoch 1 first', () => {
    expect(new FetchSession(5, false, false, 0, parts(1)).epoch).toBe(1)
  })
})

describe('FetchSessionCache', () => {
  it('hands out unique random positive int32 ids', () => {
    const c = new FetchSessionCache({ maxEntries: 500 })
    const ids = new Set<number>()
    for (let i = 0; i < 500; i++) ids.add(c.maybeCreateSession(0, false, false, parts(1)))
    expect(ids.size).toBe(500)
    for (const id of ids) {
      expect(Number.isInteger(id) && id > 0 && id <= 0x7fffffff).toBe(true)
    }
  })

  it('skips ids already in use and the invalid id 0', () => {
    const seq = [7, 7, 0, -3, 9]
    const c = new FetchSessionCache({ maxEntries: 10, randomId: () => seq.shift()! })
    expect(c.maybeCreateSession(0, false, false, parts(1))).toBe(7)
    expect(c.maybeCreateSession(0, false, false, parts(1))).toBe(9)
  })

  it('defaults to 1000 slots and counts sessions, partitions and evictions', () => {
    expect(new FetchSessionCache().maxEntries).toBe(1000)
    const c = cache(1)
    c.maybeCreateSession(0, false, false, parts(3))
    expect(c.metrics).toEqual({ sessions: 1, partitionsCached: 3, evictions: 0, sessionsCreated: 1 })
    c.maybeCreateSession(IDLE, false, false, parts(2))
    expect(c.metrics).toEqual({ sessions: 1, partitionsCached: 2, evictions: 1, sessionsCreated: 2 })
  })

  it('a cache of 0 slots never creates a session', () => {
    expect(cache(0).maybeCreateSession(0, true, false, parts(5))).toBe(INVALID_SESSION_ID)
  })

  it('evicts a session idle more than 120 s, whatever its kind and size', () => {
    const c = cache(1)
    const follower = c.maybeCreateSession(0, true, false, parts(100))
    expect(c.maybeCreateSession(FETCH_SESSION_EVICTION_MS, false, false, parts(1))).toBe(INVALID_SESSION_ID)
    const consumer = c.maybeCreateSession(IDLE, false, false, parts(1))
    expect(consumer).not.toBe(INVALID_SESSION_ID)
    expect(c.get(follower)).toBeUndefined()
  })

  it('evicts the least recently used idle session, not the first created (no FIFO)', () => {
    const c = cache(2)
    const first = c.maybeCreateSession(0, false, false, parts(1))
    const second = c.maybeCreateSession(10, false, false, parts(1))
    c.touch(c.get(first)!, 20) // first is now the more recently used
    const third = c.maybeCreateSession(10 + IDLE, false, false, parts(1))
    expect(third).not.toBe(INVALID_SESSION_ID)
    expect(c.get(second)).toBeUndefined()
    expect(c.get(first)).toBeDefined()
  })

  it('a follower (privileged) session evicts a consumer session that is not idle', () => {
    const c = cache(1)
    const consumer = c.maybeCreateSession(0, false, false, parts(50))
    const follower = c.maybeCreateSession(1000, true, false, parts(1))
    expect(follower).not.toBe(INVALID_SESSION_ID)
    expect(c.get(consumer)).toBeUndefined()
  })

  it('a consumer session cannot evict a follower session, even a smaller one', () => {
    const c = cache(1)
    const follower = c.maybeCreateSession(0, true, false, parts(1))
    c.touch(c.get(follower)!, IDLE - 10)
    expect(c.maybeCreateSession(IDLE, false, false, parts(100))).toBe(INVALID_SESSION_ID)
    expect(c.get(follower)).toBeDefined()
  })

  it('a young follower session is safe even from followers', () => {
    const c = cache(1)
    const follower = c.maybeCreateSession(0, true, false, parts(1))
    expect(c.maybeCreateSession(1000, true, false, parts(100))).toBe(INVALID_SESSION_ID)
    expect(c.get(follower)).toBeDefined()
  })

  it('a larger consumer session evicts a smaller one older than 120 s (but still in use)', () => {
    const c = cache(1)
    const small = c.maybeCreateSession(0, false, false, parts(2))
    c.touch(c.get(small)!, IDLE - 10)
    const large = c.maybeCreateSession(IDLE, false, false, parts(3))
    expect(large).not.toBe(INVALID_SESSION_ID)
    expect(c.get(small)).toBeUndefined()
  })

  it('a consumer session does not evict one of the same or larger size', () => {
    const c = cache(1)
    const s = c.maybeCreateSession(0, false, false, parts(3))
    c.touch(c.get(s)!, IDLE - 10)
    expect(c.maybeCreateSession(IDLE, false, false, parts(3))).toBe(INVALID_SESSION_ID)
    expect(c.maybeCreateSession(IDLE, false, false, parts(2))).toBe(INVALID_SESSION_ID)
    expect(c.get(s)).toBeDefined()
  })

  it('a consumer session does not evict a young consumer session, even a smaller one', () => {
    const c = cache(1)
    const s = c.maybeCreateSession(0, false, false, parts(1))
    expect(c.maybeCreateSession(1000, false, false, parts(100))).toBe(INVALID_SESSION_ID)
    expect(c.get(s)).toBeDefined()
  })

  it('evicts the least valuable evictable session: the smallest consumer first', () => {
    const c = cache(3)
    const big = c.maybeCreateSession(0, false, false, parts(5))
    const small = c.maybeCreateSession(0, false, false, parts(1))
    const follower = c.maybeCreateSession(0, true, false, parts(1))
    const newcomer = c.maybeCreateSession(1000, true, false, parts(2))
    expect(newcomer).not.toBe(INVALID_SESSION_ID)
    expect(c.get(small)).toBeUndefined()
    expect(c.get(big)).toBeDefined()
    expect(c.get(follower)).toBeDefined()
  })

  it('touch makes a session the most recently used', () => {
    const c = cache(3)
    const a = c.maybeCreateSession(0, false, false, parts(1))
    const b = c.maybeCreateSession(1, false, false, parts(1))
    c.touch(c.get(a)!, 2)
    expect(c.ids()).toEqual([b, a])
    expect(c.get(a)!.lastUsedMs).toBe(2)
  })

  it('remove frees the slot', () => {
    const c = cache(1)
    const a = c.maybeCreateSession(0, false, false, parts(1))
    expect(c.remove(a)).toBeDefined()
    expect(c.maybeCreateSession(1, false, false, parts(1))).not.toBe(INVALID_SESSION_ID)
    expect(c.metrics.evictions).toBe(0)
  })
})

describe('FetchSession', () => {
  it('update adds new partitions at the end, updates listed ones in place and drops forgotten ones', () => {
    const s = new FetchSession(1, false, false, 0, parts(3))
    const moved = { ...parts(3)[1], fetchOffset: 42n, maxBytes: 7 }
    const added = { ...parts(1, 'u')[0] }
    const result = s.update([moved, added], [{ topic: 't', topicId: ZERO_UUID, partition: 0 }])
    expect(result).toEqual({ added: 1, updated: 1, removed: 1 })
    expect([...s.partitions.keys()]).toEqual(['t:1', 't:2', 'u:0'])
    expect(s.partitions.get('t:1')).toMatchObject({ fetchOffset: 42n, maxBytes: 7 })
  })

  it('moveToEnd puts a partition at the back of the reading order', () => {
    const s = new FetchSession(1, false, false, 0, parts(3))
    s.moveToEnd({ topic: 't', topicId: ZERO_UUID, partition: 0 })
    expect([...s.partitions.keys()]).toEqual(['t:1', 't:2', 't:0'])
  })

  it('keys partitions by topic id when the session uses topic ids', () => {
    const id = Buffer.alloc(16, 0xab)
    const p = newCachedPartition({ topic: '', topicId: id, partition: 3, fetchOffset: 0n, logStartOffset: -1n, maxBytes: 1, currentLeaderEpoch: -1, lastFetchedEpoch: -1 })
    const s = new FetchSession(1, false, true, 0, [p])
    expect([...s.partitions.keys()]).toEqual([`${id.toString('hex')}:3`])
  })
})
