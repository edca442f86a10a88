/**
 * Kafka's placement of group ids and transactional ids (ts/coordinator/partition-for.ts) against
 * Kafka's own code: tools/kafka/CoordinatorPartitionFor.java runs `Utils.abs(key.hashCode()) %
 * n` from the kafka-clients jar over the same keys (ASCII, accents, CJK, emoji as surrogate
 * pairs, keys whose hash is negative or Integer.MIN_VALUE).
 */
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { javaStringHashCode, kafkaAbs, partitionFor } from '../../ts/coordinator/partition-for.js'
import { fetchKafkaJars } from '../helpers/kafka-tools.js'
import { runJava } from '../helpers/java.js'

const KAFKA = join(__dirname, '../../tools/kafka')
const COUNTS = [50, 7, 3, 1]

function keys(): string[] {
  const out = ['', 'a', 'group-1', 'polygenelubricants', 'GydZG_', 'DESIGNING WORKHOUSES', 'groupé', '消费者组', 'emoji-😀-🎉', 'txn\u0000nul', ' '.repeat(40)]
  // Deterministic, varied: lengths 1-60, code points from ASCII to astral planes.
  let seed = 12345
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0)
  const ranges = [
    [0x20, 0x7e],
    [0xa0, 0x2ff],
    [0x4e00, 0x9fff],
    [0x1f300, 0x1f6ff],
  ] as const
  for (let i = 0; i < 2000; i++) {
    const len = 1 + (next() % 60)
    let s = i % 3 === 0 ? `consumer-group-${i}-` : i % 3 === 1 ? `txn-${i}-` : ''
    for (let j = 0; j < len; j++) {
      const [lo, hi] = ranges[next() % (i % 5 === 0 ? 4 : 1)]!
      s += String.fromCodePoint(lo + (next() % (hi - lo + 1)))
    }
    out.push(s)
  }
  return out
}

describe('partitionFor', () => {
  beforeAll(() => fetchKafkaJars())

  it("places 2011 keys as Kafka's Utils.abs(key.hashCode()) % n does", async () => {
    const all = keys()
    const input = all.map((k) => Buffer.from(k, 'utf8').toString('base64')).join('\n') + '\n'
    const r = await runJava(join(KAFKA, 'CoordinatorPartitionFor.java'), COUNTS.map(String), { input })
    expect(r.stderr).toBe('')
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(all.length)
    const ours = all.map((k) => COUNTS.map((n) => partitionFor(k, n)).join('\t'))
    expect(ours).toEqual(lines)
    // The keys reach every partition of 50, and negative hashes were among them.
    expect(new Set(all.map((k) => partitionFor(k, 50))).size).toBe(50)
    expect(all.filter((k) => javaStringHashCode(k) < 0).length).toBeGreaterThan(100)
  })

  it('maps Integer.MIN_VALUE to 0, as Utils.abs', () => {
    expect(javaStringHashCode('polygenelubricants')).toBe(-2147483648)
    expect(kafkaAbs(-2147483648)).toBe(0)
    expect(partitionFor('polygenelubricants', 50)).toBe(0)
    expect(() => partitionFor('g', 0)).toThrow(RangeError)
  })
})
