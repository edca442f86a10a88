/**
 * Client quotas on the wire (issue 29 item 5): the same AlterClientQuotas and
 * DescribeClientQuotas requests sent to ferrolog and to Apache Kafka 4.4, answered alike: quotas
 * set on user, client-id, user + client-id and ip entities, default entities included; every
 * match type of the describe filter, strict or not; Kafka's refusals with their messages (an
 * empty entity, an unknown entity type, an empty name, ip beside user, an unknown key, a value not
 * above 0, a fractional or too large LONG, a key of the other kind of entity, a key twice, an
 * entity twice); validateOnly storing nothing; removals. Then kafka-configs.sh's quota commands
 * (--alter --add-config / --delete-config, --describe --entity-type clients / users) print the
 * same on both, and ferrolog's quotas survive a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { alterClientQuotasCodec, type AlterClientQuotasRequest } from '../../ts/protocol/apis/alter-client-quotas.js'
import { describeClientQuotasCodec, MatchType, type DescribeClientQuotasResponse } from '../../ts/protocol/apis/describe-client-quotas.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, runKafkaBroker, runKafkaTool, stopKafkaBroker } from '../helpers/kafka-tools.js'

let broker: Broker | undefined
let kafkaDir: string | undefined
let ferrologDir: string | undefined
let kafkaPort = 0

beforeAll(async () => {
  fetchKafkaJars()
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-quotas-'))
  broker = await startBroker({ dataDir: ferrologDir })
  kafkaDir = mkdtempSync(join(tmpdir(), 'kafka-quotas-'))
  kafkaPort = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
}, 300_000)
afterAll(async () => {
  try {
    await broker?.stop()
  } finally {
    if (kafkaDir) stopKafkaBroker(kafkaDir)
    for (const dir of [ferrologDir, kafkaDir]) if (dir) rmSync(dir, { recursive: true, force: true })
  }
})

type Entity = Array<[type: string, name: string | null]>
type Op = [key: string, value: number | null]
const entry = (entity: Entity, ops: Op[]) => ({
  entity: entity.map(([entityType, entityName]) => ({ entityType, entityName })),
  ops: ops.map(([key, value]) => ({ key, value: value ?? 0, remove: value === null })),
})
const alter = (entries: ReturnType<typeof entry>[], validateOnly = false): AlterClientQuotasRequest => ({ entries, validateOnly })

/** The alterations, in order; each answer is compared as it comes (entities in Kafka's order). */
const ALTERS: AlterClientQuotasRequest[] = [
  alter([entry([['client-id', 'c1']], [['producer_byte_rate', 1024]])]),
  alter([
    entry(
      [
        ['user', 'alice'],
        ['client-id', null],
      ],
      [
        ['consumer_byte_rate', 2048],
        ['request_percentage', 50.5],
      ],
    ),
    entry([['user', null]], [['producer_byte_rate', 4096]]),
    entry([['client-id', null]], [['controller_mutation_rate', 2.5]]),
    entry(
      [
        ['user', 'alice'],
        ['client-id', 'c1'],
      ],
      [['producer_byte_rate', 512]],
    ),
  ]),
  alter([entry([['ip', '127.0.0.1']], [['connection_creation_rate', 10]]), entry([['ip', null]], [['connection_creation_rate', 5]])]),
  // Refusals, one entity each, all in one request.
  alter([
    entry([], [['producer_byte_rate', 1]]),
    entry([['topic', 't']], [['producer_byte_rate', 1]]),
    entry([['user', '']], [['producer_byte_rate', 1]]),
    entry(
      [
        ['ip', '10.0.0.1'],
        ['user', 'bob'],
      ],
      [['connection_creation_rate', 1]],
    ),
    entry([['client-id', 'unknown-key']], [['foo', 1]]),
    entry([['client-id', 'negative']], [['producer_byte_rate', -5]]),
    entry([['client-id', 'zero']], [['consumer_byte_rate', 0]]),
    entry([['client-id', 'fraction']], [['producer_byte_rate', 1.5]]),
    entry([['client-id', 'huge']], [['producer_byte_rate', 1e19]]),
    entry([['user', 'ipkey']], [['connection_creation_rate', 3]]),
    entry([['ip', '10.0.0.2']], [['request_percentage', 3]]),
    entry([['ip', '10.0.0.3']], [['connection_creation_rate', 2.5]]),
    entry(
      [['client-id', 'twice-key']],
      [
        ['producer_byte_rate', 1],
        ['producer_byte_rate', 2],
      ],
    ),
    entry([['client-id', 'twice']], [['producer_byte_rate', 100]]),
    entry([['client-id', 'twice']], [['consumer_byte_rate', 100]]),
    // One bad key refuses the whole entry, the good one too.
    entry(
      [['client-id', 'half']],
      [
        ['consumer_byte_rate', 100],
        ['producer_byte_rate', -1],
      ],
    ),
  ]),
  alter([entry([['client-id', 'c2']], [['producer_byte_rate', 1]])], true),
  alter([entry([['client-id', 'c1']], [['producer_byte_rate', null]]), entry([['client-id', 'never-set']], [['consumer_byte_rate', null]])]),
  alter([entry([['user', null]], [['producer_byte_rate', 8192]])]),
]

const c = (entityType: string, matchType: number, match: string | null = null) => ({ entityType, matchType, match })
/** The filters asked after every alteration. */
const FILTERS: Array<{ components: ReturnType<typeof c>[]; strict: boolean }> = [
  { components: [], strict: false },
  { components: [], strict: true },
  { components: [c('user', MatchType.SPECIFIED)], strict: false },
  { components: [c('user', MatchType.SPECIFIED)], strict: true },
  { components: [c('user', MatchType.EXACT, 'alice')], strict: false },
  { components: [c('user', MatchType.DEFAULT)], strict: true },
  { components: [c('client-id', MatchType.EXACT, 'c1')], strict: false },
  { components: [c('client-id', MatchType.DEFAULT)], strict: false },
  { components: [c('user', MatchType.EXACT, 'alice'), c('client-id', MatchType.DEFAULT)], strict: true },
  { components: [c('user', MatchType.SPECIFIED), c('client-id', MatchType.SPECIFIED)], strict: false },
  { components: [c('ip', MatchType.SPECIFIED)], strict: false },
  { components: [c('ip', MatchType.DEFAULT)], strict: true },
  { components: [c('ip', MatchType.SPECIFIED), c('user', MatchType.SPECIFIED)], strict: false },
  { components: [c('user', MatchType.EXACT, null)], strict: false },
  { components: [c('topic', MatchType.SPECIFIED)], strict: false },
]

/** A describe answer in a fixed order: Kafka lists entities, their types and values from hash maps. */
function sorted(r: DescribeClientQuotasResponse): unknown {
  const entries = r.entries?.map((e) => ({
    entity: [...e.entity].sort((a, b) => (a.entityType < b.entityType ? -1 : 1)),
    values: [...e.values].sort((a, b) => (a.key < b.key ? -1 : 1)),
  }))
  return { ...r, entries: entries?.sort((a, b) => (JSON.stringify(a.entity) < JSON.stringify(b.entity) ? -1 : 1)) ?? null }
}

async function describeAll(wire: KafkaWire, version: number): Promise<unknown[]> {
  const out: unknown[] = []
  for (const f of FILTERS) out.push(sorted(await wire.send(describeClientQuotasCodec, version, f)))
  return out
}

describe('client quotas on the wire', () => {
  it('AlterClientQuotas and DescribeClientQuotas answer the same on ferrolog and on Apache Kafka 4.4', async () => {
    const ours = new KafkaWire(await connectTo(broker!.port), 'quotas-wire')
    const theirs = new KafkaWire(await connectTo(kafkaPort), 'quotas-wire')
    try {
      for (const [i, request] of ALTERS.entries()) {
        const version = i % 2
        const [a, b] = await Promise.all([ours.send(alterClientQuotasCodec, version, request), theirs.send(alterClientQuotasCodec, version, request)])
        expect(a, `alteration ${i}`).toEqual(b)
        const expected = await describeAll(ours, version)
        // Kafka's broker answers from its metadata image, which a change reaches a moment after
        // the controller acknowledged it: asked again until it shows the change (or differs for good).
        let got = await describeAll(theirs, version)
        for (let tries = 0; JSON.stringify(got) !== JSON.stringify(expected) && tries < 100; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 50))
          got = await describeAll(theirs, version)
        }
        expect(got, `describes after alteration ${i}`).toEqual(expected)
      }
      const refusals = await ours.send(alterClientQuotasCodec, 1, ALTERS[3]!)
      expect(refusals.entries.every((e) => e.errorCode === 42)).toBe(true)
      expect(refusals.entries.map((e) => e.errorMessage)).toContain('Invalid configuration key foo')
      const all = (await ours.send(describeClientQuotasCodec, 1, FILTERS[0]!)).entries!
      expect(
        all.map((e) =>
          e.entity
            .map((x) => `${x.entityType}=${x.entityName}`)
            .sort()
            .join(','),
        ),
      ).toEqual(expect.arrayContaining(['client-id=null,user=alice', 'user=null', 'ip=127.0.0.1', 'ip=null', 'client-id=c1,user=alice', 'client-id=null', 'client-id=twice']))
      // 'twice': its first entry was applied though the answer refuses the entity (Kafka's atomic batch).
      expect(all).toHaveLength(7)
    } finally {
      ours.close()
      theirs.close()
    }
  }, 300_000)

  it("kafka-configs.sh's quota commands print the same on both, and ferrolog's quotas survive a restart", async () => {
    const configs = async (port: number, args: string[]): Promise<string> => {
      const r = await runKafkaTool(port, KafkaTool.CONFIGS, args)
      const failure = /Caused by: (\S+Exception: .*)|ExecutionException: (\S+Exception: .*)|(\S+Exception: .*)/.exec(r.stdout + r.stderr)
      if (r.status !== 0) return `exit ${r.status}: ${failure ? (failure[1] ?? failure[2] ?? failure[3]) : r.stdout + r.stderr}`
      // Kafka prints an entity's quotas from a hash map: compared sorted.
      const line = (l: string) => l.replace(/( are )(.*)$/, (_, are: string, list: string) => are + list.split(', ').sort().join(', '))
      return r.stdout.trim().split('\n').map(line).sort().join('\n')
    }
    const SCENARIO: string[][] = [
      ['--alter', '--entity-type', 'clients', '--entity-name', 'k1', '--add-config', 'producer_byte_rate=1024'],
      ['--alter', '--entity-type', 'users', '--entity-name', 'bob', '--add-config', 'consumer_byte_rate=2048,request_percentage=25'],
      ['--alter', '--entity-type', 'users', '--entity-default', '--add-config', 'producer_byte_rate=100000'],
      ['--alter', '--entity-type', 'users', '--entity-name', 'bob', '--entity-type', 'clients', '--entity-name', 'k1', '--add-config', 'producer_byte_rate=512'],
      ['--describe', '--entity-type', 'clients'],
      ['--describe', '--entity-type', 'clients', '--entity-name', 'k1'],
      ['--describe', '--entity-type', 'users'],
      ['--describe', '--entity-type', 'users', '--entity-name', 'bob'],
      ['--describe', '--entity-type', 'users', '--entity-type', 'clients'],
      ['--alter', '--entity-type', 'clients', '--entity-name', 'k1', '--add-config', 'producer_byte_rate=-1'],
      ['--alter', '--entity-type', 'clients', '--entity-name', 'k1', '--delete-config', 'producer_byte_rate'],
      ['--describe', '--entity-type', 'clients'],
    ]
    const ours: string[] = []
    const theirs: string[] = []
    for (const args of SCENARIO) {
      const a = await configs(broker!.port, args)
      // As above: Kafka's describe may come before its image shows the last change.
      let b = await configs(kafkaPort, args)
      for (let tries = 0; args[0] === '--describe' && b !== a && tries < 5; tries++) b = await configs(kafkaPort, args)
      ours.push(a)
      theirs.push(b)
    }
    expect(ours).toEqual(theirs)
    expect(ours[0]).toBe('Completed updating config for client k1.')
    expect(ours[5]).toContain("Quota configs for client-id 'k1' are producer_byte_rate=1024.0")

    // Durable: the same after a restart.
    const before = await configs(broker!.port, ['--describe', '--entity-type', 'users'])
    await broker!.stop()
    broker = await startBroker({ dataDir: ferrologDir })
    expect(await configs(broker.port, ['--describe', '--entity-type', 'users'])).toBe(before)
    expect(before).toContain("Quota configs for user-principal 'bob' are consumer_byte_rate=2048.0, request_percentage=25.0")
  }, 300_000)
})
