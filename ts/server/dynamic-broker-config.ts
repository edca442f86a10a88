/**
 * Kafka's DynamicBrokerConfig (KIP-226): broker configs changed while the broker runs, by
 * AlterConfigs or IncrementalAlterConfigs on a BROKER resource: this broker's id (per-broker
 * values) or the empty name (the cluster-wide defaults). A key's value is, most specific first:
 * this broker's dynamic value, the cluster-wide dynamic default, server.properties (static), the
 * table's default (ts/config/broker-configs.ts, where each key's update mode is declared).
 *
 * A change is validated (a read-only key: INVALID_REQUEST "Cannot update these configs
 * dynamically: [...]"; a bad value: INVALID_REQUEST naming it, as Kafka 4.4 answers), written,
 * then applied at once to the live BrokerConfig: the log defaults reach every log without its
 * own override, log.cleaner.threads resizes the cleaner, message.max.bytes bounds the next
 * Produce. A name the table does not know is kept as given and described as sensitive, as Kafka
 * does with names it does not know.
 *
 * A standalone broker keeps them in `<dataDir>/ferrolog-broker-configs.json`, read at start
 * before any log opens:
 *
 *   { "version": 1, "default": { "log.cleaner.threads": "2" }, "broker": { "log.retention.ms": "1000" } }
 *
 * written atomically (tmp, fsync, rename) on every change. A broker of a cluster keeps them in
 * etcd (`configs/brokers/default`, `configs/brokers/<id>`, ts/cluster/keys.ts), so that every
 * broker sees the cluster-wide defaults: a change made through any broker reaches the others
 * through their metadata watch and is applied there at once too.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../config/config-def.js'
import { BROKER_CONFIG_KEY, BROKER_CONFIG_KEYS, type BrokerConfig } from '../config/broker-configs.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'
import { TopicError } from './topic-error.js'

export const BROKER_CONFIGS_FILE = 'ferrolog-broker-configs.json'

/** Kafka's DescribeConfigsResponse ConfigSource codes of a broker key's layers. */
export const BrokerConfigSource = { DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const

/** One layer a broker key's value may come from, as DescribeConfigs lists its synonyms. */
export interface BrokerConfigSynonym {
  name: string
  value: string | null
  source: number
}

/** The two dynamic layers: the cluster-wide defaults and this broker's own values. */
export type DynamicLayer = 'default' | 'broker'

/** Where the dynamic layers are kept: the data dir's file, or the cluster's etcd. */
export interface DynamicConfigStore {
  /** Writes `configs` as layer `layer` (the other layer as it is); resolves once durable. */
  write(layer: DynamicLayer, configs: Record<string, string>, both: Readonly<Record<DynamicLayer, Record<string, string>>>): Promise<void>
}

/** The layers a broker of a cluster reads (ts/cluster ClusterMetadata), and where it writes them. */
export interface ClusterBrokerConfigs {
  brokerConfigs(): Record<DynamicLayer, Record<string, string>>
  write(id: number | null, configs: Record<string, string>): Promise<void>
  /** Calls `listener` whenever either layer changed (any broker's write). */
  onChange(listener: () => void): void
}

interface StoredConfigs {
  version: 1
  default: Record<string, string>
  broker: Record<string, string>
}

export class DynamicBrokerConfig {
  private readonly store: DynamicConfigStore
  private readonly where: string
  /** The config as server.properties gave it. */
  private readonly staticConfig: BrokerConfig
  /** The config with no key set. */
  private readonly defaultConfig: BrokerConfig
  private layers: { default: Record<string, string>; broker: Record<string, string> }
  /** Runs after each change with the keys that changed (the broker applies them). */
  onChange: (changed: string[]) => void = () => undefined
  /**
   * Checks a change before it is written (the broker's: new TLS key stores must load); throws
   * TopicError INVALID_REQUEST to refuse it.
   */
  validate: (layer: DynamicLayer, configs: Record<string, string>) => void = () => undefined
  /**
   * Runs after each change made through this broker with every name it gave, changed or not: a
   * key store location given again is read again (Kafka reloads a key store file that changed
   * under the same name).
   */
  onAlter: (names: string[]) => void = () => undefined

  private constructor(store: DynamicConfigStore, where: string, live: BrokerConfig, defaults: BrokerConfig, layers: Record<DynamicLayer, Record<string, string>>) {
    this.store = store
    this.where = where
    this.live = live
    this.staticConfig = structuredClone(live)
    this.defaultConfig = defaults
    this.layers = { default: layers.default, broker: layers.broker }
  }

  /** The live config (the broker's own object, changed in place). */
  readonly live: BrokerConfig

  /**
   * Reads the stored dynamic configs of `config.dataDir` and applies them to `config` (in place,
   * before anything reads it); `defaults` is the config with nothing set.
   */
  static load(config: BrokerConfig, defaults: BrokerConfig): DynamicBrokerConfig {
    const file = join(config.dataDir, BROKER_CONFIGS_FILE)
    let stored: StoredConfigs = { version: 1, default: {}, broker: {} }
    let text: string | null = null
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    if (text !== null) stored = parseStored(text, file)
    const store: DynamicConfigStore = {
      write: (_, __, both) => writeFileDurably(file, JSON.stringify({ version: 1, default: both.default, broker: both.broker } satisfies StoredConfigs, null, 2) + '\n'),
    }
    const dynamic = new DynamicBrokerConfig(store, file, config, defaults, stored)
    dynamic.recompute()
    return dynamic
  }

  /**
   * The dynamic configs of a broker of a cluster, from etcd (its metadata cache, loaded before
   * this): applied to `config` in place now, and again whenever any broker changes them.
   */
  static ofCluster(config: BrokerConfig, defaults: BrokerConfig, cluster: ClusterBrokerConfigs): DynamicBrokerConfig {
    const store: DynamicConfigStore = { write: (layer, configs) => cluster.write(layer === 'default' ? null : config.nodeId, configs) }
    const dynamic = new DynamicBrokerConfig(store, 'etcd', config, defaults, cluster.brokerConfigs())
    dynamic.recompute()
    cluster.onChange(() => dynamic.replaceLayers(cluster.brokerConfigs()))
    return dynamic
  }

  /** The values of a layer as stored. */
  layer(layer: DynamicLayer): Readonly<Record<string, string>> {
    return this.layers[layer]
  }

  /**
   * Replaces a layer's values with `configs` (validated first; nothing changes on an error:
   * TopicError INVALID_REQUEST), writes them, and applies them.
   */
  async alter(layer: DynamicLayer, configs: Record<string, string>, validateOnly: boolean): Promise<void> {
    const readOnly = Object.keys(configs).filter((name) => BROKER_CONFIG_KEY.get(name)?.dynamic === 'read-only')
    if (readOnly.length > 0) throw new TopicError(ErrorCode.INVALID_REQUEST, `Cannot update these configs dynamically: [${readOnly.join(', ')}]`)
    for (const [name, value] of Object.entries(configs)) {
      const key = BROKER_CONFIG_KEY.get(name)
      if (!key) continue
      try {
        key.value.parse(value, name)
      } catch (err) {
        if (err instanceof ConfigError) throw new TopicError(ErrorCode.INVALID_REQUEST, `Invalid value ${value} for configuration ${name}: ${err.message}`)
        throw err
      }
    }
    this.validate(layer, configs)
    if (validateOnly) return
    const next = { ...this.layers, [layer]: { ...configs } }
    try {
      await this.store.write(layer, { ...configs }, next)
    } catch (err) {
      throw new TopicError(ErrorCode.KAFKA_STORAGE_ERROR, `cannot write the dynamic broker configs to ${this.where}: ${(err as Error).message}`)
    }
    this.replaceLayers(next)
    this.onAlter(Object.keys(configs))
  }

  /** Takes both layers as now stored and applies what changed (nothing when nothing did). */
  replaceLayers(next: Record<DynamicLayer, Record<string, string>>): void {
    const changed: string[] = []
    for (const layer of ['default', 'broker'] as const) {
      const before = this.layers[layer]
      const after = next[layer]
      for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) if (before[name] !== after[name]) changed.push(name)
    }
    if (changed.length === 0) return
    this.layers = { default: { ...next.default }, broker: { ...next.broker } }
    this.recompute()
    this.onChange([...new Set(changed)])
  }

  /**
   * A key's layers, most specific first (Kafka's synonyms of a broker config): this broker's
   * dynamic value, the dynamic default, the static value when it differs from the default, the
   * default. The first is the key's value and source.
   */
  synonyms(name: string): BrokerConfigSynonym[] {
    const key = BROKER_CONFIG_KEY.get(name)
    const sensitive = !key || key.value.type === 'PASSWORD'
    const shown = (text: string) => (sensitive ? null : text)
    const out: BrokerConfigSynonym[] = []
    if (this.layers.broker[name] !== undefined) out.push({ name, value: shown(this.layers.broker[name]), source: BrokerConfigSource.DYNAMIC_BROKER_CONFIG })
    if (this.layers.default[name] !== undefined) out.push({ name, value: shown(this.layers.default[name]), source: BrokerConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG })
    if (!key) return out
    const format = (config: BrokerConfig) => {
      const v = key.get(config)
      return v === null || v === undefined || sensitive ? null : key.value.format(v)
    }
    const staticValue = format(this.staticConfig)
    const defaultValue = format(this.defaultConfig)
    if (staticValue !== defaultValue) out.push({ name, value: staticValue, source: BrokerConfigSource.STATIC_BROKER_CONFIG })
    out.push({ name, value: defaultValue, source: BrokerConfigSource.DEFAULT_CONFIG })
    return out
  }

  /** The live config: the static one with each dynamic key's dynamic value over it. */
  private recompute(): void {
    for (const key of BROKER_CONFIG_KEYS) {
      if (key.dynamic === 'read-only') continue
      let value = key.get(this.staticConfig)
      for (const text of [this.layers.default[key.name], this.layers.broker[key.name]]) {
        if (text === undefined) continue
        try {
          value = key.value.parse(text, key.name)
        } catch {
          // A value stored by another broker's version that this one refuses: the next layer, or the static value.
        }
      }
      key.set(this.live, value)
    }
  }
}

function parseStored(text: string, file: string): StoredConfigs {
  const bad = (why: string) => new StorageError('STORAGE_ERROR', `${file}: ${why}; fix or remove it (its dynamic broker configs are lost then)`)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw bad('not JSON')
  }
  const p = parsed as Partial<StoredConfigs>
  const isStrings = (o: unknown) => typeof o === 'object' && o !== null && Object.values(o).every((v) => typeof v === 'string')
  if (p?.version !== 1 || !isStrings(p.default) || !isStrings(p.broker)) throw bad('not a version 1 broker configs file')
  return { version: 1, default: p.default!, broker: p.broker! }
}
