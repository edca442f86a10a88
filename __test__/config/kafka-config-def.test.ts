/**
 * ferrolog's config table against Apache Kafka 4.4's own ConfigDef (LogConfig for topics,
 * AbstractKafkaConfig for brokers, DynamicBrokerConfig's update modes), read from Kafka's jars
 * by tools/kafka/ConfigDefDump.java: every key Kafka also has carries Kafka's type, default,
 * validator and update mode, unless the table says how and why ferrolog differs (then Kafka must still
 * have the key and, for topic keys, its type and default); a key marked
 * as ferrolog's own is one Kafka does not have.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { BROKER_CONFIG_KEYS } from '../../ts/config/broker-configs.js'
import { LEGACY_TOPIC_CONFIG_NAMES, TOPIC_CONFIG_KEYS } from '../../ts/config/topic-configs.js'
import { fetchKafkaJars } from '../helpers/kafka-tools.js'

interface KafkaKey {
  scope: 'topic' | 'broker'
  name: string
  type: string
  default: string | null
  validator: string | null
  dynamic: 'per-broker' | 'cluster-wide' | null
}

const KAFKA = join(__dirname, '../../tools/kafka')
let kafka: { topic: Map<string, KafkaKey>; broker: Map<string, KafkaKey> }

beforeAll(() => {
  fetchKafkaJars()
  const out = execFileSync('java', ['-cp', `${join(KAFKA, '.jars')}/*`, join(KAFKA, 'ConfigDefDump.java')], { encoding: 'utf8', maxBuffer: 16 << 20 })
  const keys = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as KafkaKey)
  kafka = {
    topic: new Map(keys.filter((k) => k.scope === 'topic').map((k) => [k.name, k])),
    broker: new Map(keys.filter((k) => k.scope === 'broker').map((k) => [k.name, k])),
  }
}, 120_000)

describe('the config table matches Kafka 4.4', () => {
  it("topic keys: type, default and validator as Kafka's LogConfig", () => {
    for (const k of TOPIC_CONFIG_KEYS) {
      const theirs = kafka.topic.get(k.name)
      expect(theirs, k.name).toBeDefined()
      expect(k.value.type, k.name).toBe(theirs!.type)
      expect(k.value.format(k.default), k.name).toBe(theirs!.default)
      if (!k.differs) expect(k.value.valid, k.name).toBe(theirs!.validator ?? '')
    }
    for (const name of LEGACY_TOPIC_CONFIG_NAMES) expect(kafka.topic.has(name), name).toBe(false)
  })

  it("broker keys: type, default, validator and update mode as Kafka's broker config", () => {
    for (const k of BROKER_CONFIG_KEYS) {
      const theirs = kafka.broker.get(k.name)
      if (k.ferrologOnly) {
        expect(theirs, `${k.name} is marked ferrolog's own`).toBeUndefined()
        continue
      }
      if (k.outsideConfigDef) {
        expect(theirs, `${k.name} is read by ${k.outsideConfigDef}`).toBeUndefined()
        continue
      }
      expect(theirs, k.name).toBeDefined()
      if (k.differs) continue
      expect(k.dynamic, k.name).toBe(theirs!.dynamic ?? 'read-only')
      expect(k.value.type, k.name).toBe(theirs!.type)
      expect(k.default === null ? null : k.value.format(k.default), k.name).toBe(theirs!.default)
      expect(k.value.valid, k.name).toBe(theirs!.validator ?? '')
    }
  })

  it("each synonym in another unit has Kafka's default in that unit", () => {
    for (const k of BROKER_CONFIG_KEYS) {
      for (const s of k.synonyms ?? []) {
        const theirs = kafka.broker.get(s.name)
        expect(theirs, s.name).toBeDefined()
        if (s.factor !== 1 && theirs!.default !== null) expect(Number(theirs!.default) * s.factor, s.name).toBe(k.default)
      }
    }
  })
})
