/** LeaderEpochFileCache: Kafka's checkpoint text and its assign / truncate / endOffsetFor rules. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { LeaderEpochFileCache } from '../../../ts/storage/js/leader-epoch-cache.js'
import { tempDir } from '../../helpers/tmp.js'

describe('LeaderEpochFileCache', () => {
  it('writes the checkpoint as "0\\n<count>\\n" then "<epoch> <startOffset>\\n" lines', () => {
    const cache = new LeaderEpochFileCache(tempDir())
    cache.write()
    expect(readFileSync(cache.file, 'latin1')).toBe('0\n0\n')
    cache.assignIfNewer(0, 0n)
    cache.assignIfNewer(3, 17n)
    cache.write()
    expect(readFileSync(cache.file, 'latin1')).toBe('0\n2\n0 0\n3 17\n')
  })

  it('parses what it writes and refuses malformed text', () => {
    expect(LeaderEpochFileCache.parse('0\n2\n0 0\n3 17\n')).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 3, startOffset: 17n },
    ])
    expect(LeaderEpochFileCache.parse('')).toEqual([])
    expect(() => LeaderEpochFileCache.parse('1\n0\n')).toThrow(/version/)
    expect(() => LeaderEpochFileCache.parse('0\n2\n0 0\n')).toThrow(/expected 2 entries/)
    expect(() => LeaderEpochFileCache.parse('0\n1\n0 x\n')).toThrow(/malformed/)
    expect(() => LeaderEpochFileCache.parse('0\n2\n3 10\n1 20\n')).toThrow(/does not follow/)
  })

  it('assigns only epochs newer than the latest', () => {
    const cache = new LeaderEpochFileCache(tempDir())
    expect(cache.assignIfNewer(-1, 0n)).toBe(false)
    expect(cache.assignIfNewer(2, 0n)).toBe(true)
    expect(cache.assignIfNewer(2, 5n)).toBe(false)
    expect(cache.assignIfNewer(1, 9n)).toBe(false)
    expect(cache.assignIfNewer(4, 10n)).toBe(true)
    expect(cache.entries()).toEqual([
      { epoch: 2, startOffset: 0n },
      { epoch: 4, startOffset: 10n },
    ])
  })

  it('truncates from the end (start >= end offset) and from the start (moving the first start)', () => {
    const cache = new LeaderEpochFileCache(tempDir(), [
      { epoch: 1, startOffset: 0n },
      { epoch: 2, startOffset: 10n },
      { epoch: 5, startOffset: 20n },
    ])
    expect(cache.truncateFromEnd(20n)).toBe(true)
    expect(cache.latestEpoch()).toBe(2)
    expect(cache.truncateFromEnd(30n)).toBe(false)
    expect(cache.truncateFromStart(12n)).toBe(true)
    expect(cache.entries()).toEqual([{ epoch: 2, startOffset: 12n }])
    expect(cache.truncateFromStart(5n)).toBe(false)
  })

  it("answers endOffsetFor as Kafka's OffsetsForLeaderEpoch does", () => {
    const cache = new LeaderEpochFileCache(tempDir(), [
      { epoch: 1, startOffset: 5n },
      { epoch: 3, startOffset: 10n },
      { epoch: 6, startOffset: 20n },
    ])
    expect(cache.endOffsetFor(6, 30n)).toEqual({ epoch: 6, endOffset: 30n })
    expect(cache.endOffsetFor(3, 30n)).toEqual({ epoch: 3, endOffset: 20n })
    expect(cache.endOffsetFor(4, 30n)).toEqual({ epoch: 3, endOffset: 20n })
    expect(cache.endOffsetFor(0, 30n)).toEqual({ epoch: 0, endOffset: 5n })
    expect(cache.endOffsetFor(7, 30n)).toBeNull()
    expect(cache.endOffsetFor(-1, 30n)).toBeNull()
    expect(cache.epochForOffset(4n)).toBeNull()
    expect(cache.epochForOffset(12n)).toBe(3)
  })
})
