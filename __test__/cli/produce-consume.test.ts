/**
 * `ferrolog produce` then `ferrolog consume --exit-at-end`, as built commands (dist/), over a
 * 12-partition topic, against a ferrolog broker process and a real Apache Kafka broker
 * (tools/kafka/run-broker.sh, one for the file): exactly the records produced come back (keys,
 * values, headers), for every codec, each keyed record on murmur2's partition, offsets without
 * gaps; keyless records spread; an unacknowledged record makes produce exit 1 with Kafka's error.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { partitionForKey } from '../../ts/client/partitioner.js'
import { spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { runProcess } from '../helpers/process.js'

const ROOT = join(__dirname, '../..')
const CLI = join(ROOT, 'dist/ts/cli/main.js')
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const

const ferrolog = (args: string[], input = '') => runProcess(process.execPath, [CLI, ...args], input, 60_000)

let ours: BrokerProcess
let kafkaDir: string
let kafkaBootstrap: string

beforeAll(async () => {
  ours = await spawnBroker({ backend: 'native' })
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-cli-'))
  const out = await runProcess('bash', [join(ROOT, 'tools/kafka/run-broker.sh'), '--data-dir', kafkaDir], '', 120_000)
  if (out.status !== 0) throw new Error(`run-broker.sh: ${out.stdout}\n${out.stderr}`)
  kafkaBootstrap = /bootstrap=(\S+)/.exec(out.stdout)![1]
}, 150_000)

afterAll(async () => {
  await ours?.stop()
  if (kafkaDir) {
    execFileSync('bash', [join(ROOT, 'tools/kafka/stop-broker.sh'), kafkaDir], { stdio: 'ignore' })
    rmSync(kafkaDir, { recursive: true, force: true })
  }
}, 90_000)

const brokers = () => [
  ['ferrolog', `127.0.0.1:${ours.port}`],
  ['Apache Kafka', kafkaBootstrap],
]

describe.each(['ferrolog', 'Apache Kafka'])('ferrolog produce / consume against %s', (name) => {
  const bootstrap = () => brokers().find(([n]) => n === name)![1]

  it('round-trips keys, values and headers over 12 partitions with every codec', { timeout: 120_000 }, async () => {
    for (const codec of CODECS) {
      const topic = `rt-${codec}`
      const created = await ferrolog(['topics', '--bootstrap-server', bootstrap(), 'create', '--topic', topic, '--partitions', '12'])
      expect(created.stdout + created.stderr).toContain(`Created topic ${topic}.`)
      const lines = Array.from({ length: 300 }, (_, i) => `key-${i}|value ${i} ${codec} ${'x'.repeat(i % 50)}`)
      const p = await ferrolog(
        ['produce', '--bootstrap-server', bootstrap(), '--topic', topic, '--key-separator', '|', '--compression', codec, '--header', 'source=test', '--header', `codec=${codec}`],
        lines.join('\n') + '\n',
      )
      expect(p.stderr).toBe('')
      expect(p.status).toBe(0)
      const c = await ferrolog(['consume', '--bootstrap-server', bootstrap(), '--topic', topic, '--offset', 'earliest', '--exit-at-end', '--format', '%p\\t%o\\t%k\\t%v\\t%h'])
      expect(c.stderr).toBe('')
      expect(c.status).toBe(0)
      const got = c.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t'))
      expect(got.map(([, , k, v]) => `${k}|${v}`).sort()).toEqual([...lines].sort())
      for (const [partition, , key, , headers] of got) {
        expect(Number(partition)).toBe(partitionForKey(Buffer.from(key), 12))
        expect(headers).toBe(`source=test,codec=${codec}`)
      }
      // Offsets per partition: 0, 1, 2, ... in order, as produced.
      const byPartition = new Map<string, string[][]>()
      for (const g of got) byPartition.set(g[0], [...(byPartition.get(g[0]) ?? []), g])
      expect(byPartition.size).toBeGreaterThan(8)
      for (const rows of byPartition.values()) {
        expect(rows.map((r) => r[1])).toEqual(rows.map((_, i) => String(i)))
        const order = rows.map((r) => Number(r[2].slice(4)))
        expect(order).toEqual([...order].sort((a, b) => a - b))
      }
    }
  })

  it('keyless records move across partitions, --partition pins them, --max-messages stops', { timeout: 60_000 }, async () => {
    const topic = 'keyless'
    await ferrolog(['topics', '--bootstrap-server', bootstrap(), 'create', '--topic', topic, '--partitions', '12'])
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} ${'y'.repeat(40)}`)
    expect((await ferrolog(['produce', '--bootstrap-server', bootstrap(), '--topic', topic, '--acks', '1'], lines.join('\n'))).status).toBe(0)
    expect((await ferrolog(['produce', '--bootstrap-server', bootstrap(), '--topic', topic, '--partition', '11', '--acks', '0'], 'pinned\n')).status).toBe(0)
    const all = await ferrolog(['consume', '--bootstrap-server', bootstrap(), '--topic', topic, '--offset', 'earliest', '--exit-at-end', '--format', '%p %v'])
    const rows = all.stdout.split('\n').filter(Boolean)
    expect(rows).toHaveLength(2001)
    expect(new Set(rows.map((r) => r.split(' ')[0])).size).toBeGreaterThan(3)
    const pinned = await ferrolog(['consume', '--bootstrap-server', bootstrap(), '--topic', topic, '--partition', '11', '--offset', 'earliest', '--exit-at-end'])
    expect(pinned.stdout.split('\n').filter(Boolean).at(-1)).toBe('pinned')
    const three = await ferrolog(['consume', '--bootstrap-server', bootstrap(), '--topic', topic, '--offset', 'earliest', '--max-messages', '3'])
    expect(three.stdout.split('\n').filter(Boolean)).toHaveLength(3)
  })

  it('exits 1 naming the records a broker did not acknowledge', { timeout: 60_000 }, async () => {
    const topic = 'small-records'
    await ferrolog(['topics', '--bootstrap-server', bootstrap(), 'create', '--topic', topic, '--partitions', '1', '--config', 'max.message.bytes=200'])
    const r = await ferrolog(['produce', '--bootstrap-server', bootstrap(), '--topic', topic], `${'z'.repeat(1000)}\n`)
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('1 of 1 records were not acknowledged')
    expect(r.stderr).toMatch(/line 1: produce to small-records-0: (MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE)/)
    const bad = await ferrolog(['produce', '--bootstrap-server', bootstrap(), '--topic', topic, '--key-separator', ':'], 'no separator here\n')
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('no key separator ":" on line 1')
  })
})
