import { describe, expect, it } from 'vitest'
import { StickyPartitioner, murmur2, partitionForKey, toPositive } from '../../ts/client/partitioner.js'

describe('the default partitioner', () => {
  it('murmur2 gives Kafka’s values (UtilsTest.testMurmur2)', () => {
    const cases: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ]
    for (const [text, hash] of cases) expect(murmur2(Buffer.from(text))).toBe(hash)
    expect(toPositive(-1)).toBe(0x7fffffff)
    expect(partitionForKey(Buffer.from('foobar'), 12)).toBe((-790332482 & 0x7fffffff) % 12)
  })

  it('keyless records stay on one partition per batch, then move on round robin', () => {
    const s = new StickyPartitioner()
    const first = s.partition('t', 4)
    expect(s.partition('t', 4)).toBe(first)
    s.onNewBatch('t', 4)
    expect(s.partition('t', 4)).toBe((first + 1) % 4)
  })
})
