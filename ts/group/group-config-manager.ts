/**
 * The configs set on groups (Kafka's `GroupConfigManager`): each group's overrides of
 * ./group-config.ts, validated, kept durably and described with their sources. Kafka keeps them
 * as ConfigRecords in its metadata log; here a standalone broker keeps them in a file of its data
 * dir (`FileGroupConfigStorage`) and a cluster in etcd (ts/cluster/group-config-store.ts), so
 * that every broker of the cluster answers the same.
 *
 * `<dataDir>/ferrolog-group-configs.json`, written atomically (tmp, fsync, rename) on every
 * change, one write at a time:
 *
 *   { "version": 1, "groups": { "my-group": { "consumer.session.timeout.ms": "50000" } } }
 *
 * A group with no overrides has no entry. A file that does not parse as this refuses the start
 * (StorageError naming the file), as the topics file does.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'
import { groupConfigDefs, KAFKA_CONSUMER_GROUP_BROKER_CONFIGS, validateGroupConfigs, type ConsumerGroupBrokerConfigs, type GroupConfigDef } from './group-config.js'

export const GROUP_CONFIGS_FILE = 'ferrolog-group-configs.json'

/** Where the overrides live: a file (standalone) or etcd (cluster). */
export interface GroupConfigStorage {
  /** The group's overrides ({} when it has none). */
  get(groupId: string): Promise<Record<string, string>>
  /** Replaces the group's overrides ({}: none left); resolves once durable. */
  set(groupId: string, configs: Record<string, string>): Promise<void>
}

/**
 * Where a described value comes from: the group's override, the broker's setting where it is not
 * Kafka's default (group.consumer.heartbeat.interval.ms=3000), or Kafka's default.
 */
export type GroupConfigSource = 'DYNAMIC_GROUP_CONFIG' | 'STATIC_BROKER_CONFIG' | 'DEFAULT_CONFIG'

export interface DescribedGroupConfig {
  def: GroupConfigDef
  value: string
  source: GroupConfigSource
  /** Most specific first: the override (if any), the broker's setting (if not Kafka's default), then Kafka's default. */
  synonyms: Array<{ name: string; value: string; source: GroupConfigSource }>
}

export class GroupConfigManager {
  private readonly storage: GroupConfigStorage
  /** The broker's group.consumer.* settings: the consumer configs' defaults and ranges. */
  private readonly broker: ConsumerGroupBrokerConfigs

  constructor(storage: GroupConfigStorage, broker: ConsumerGroupBrokerConfigs = KAFKA_CONSUMER_GROUP_BROKER_CONFIGS) {
    this.storage = storage
    this.broker = broker
  }

  /** The group's overrides as stored. */
  overrides(groupId: string): Promise<Record<string, string>> {
    return this.storage.get(groupId)
  }

  /** Every config of the group Kafka lists (internal ones only when set), with its value and source. */
  async describe(groupId: string): Promise<DescribedGroupConfig[]> {
    const overrides = await this.storage.get(groupId)
    const kafkaDefaults = new Map(groupConfigDefs(KAFKA_CONSUMER_GROUP_BROKER_CONFIGS).map((def) => [def.name, def.defaultValue]))
    return groupConfigDefs(this.broker)
      .filter((def) => !def.internal || overrides[def.name] !== undefined)
      .map((def) => {
        const synonyms: DescribedGroupConfig['synonyms'] = []
        const own = overrides[def.name]
        const kafkaDefault = kafkaDefaults.get(def.name)!
        if (own !== undefined) synonyms.push({ name: def.name, value: own, source: 'DYNAMIC_GROUP_CONFIG' })
        if (def.defaultValue !== kafkaDefault) synonyms.push({ name: def.synonym, value: def.defaultValue, source: 'STATIC_BROKER_CONFIG' })
        synonyms.push({ name: def.synonym, value: kafkaDefault, source: 'DEFAULT_CONFIG' })
        return { def, value: synonyms[0]!.value, source: synonyms[0]!.source, synonyms }
      })
  }

  /**
   * Makes `next` the group's overrides: validated as a whole (GroupConfigError with Kafka's
   * message), then stored unless `validateOnly`.
   */
  async alter(groupId: string, next: Record<string, string>, validateOnly: boolean): Promise<void> {
    const valid = validateGroupConfigs(next, this.broker)
    if (!validateOnly) await this.storage.set(groupId, valid)
  }
}

interface StoredGroupConfigs {
  version: 1
  groups: Record<string, Record<string, string>>
}

/** A standalone broker's group configs, in `<dataDir>/ferrolog-group-configs.json`. */
export class FileGroupConfigStorage implements GroupConfigStorage {
  private readonly file: string
  private readonly groups: Map<string, Record<string, string>>
  /** Writes one at a time, each from the state after the one before. */
  private writing: Promise<void> = Promise.resolve()

  private constructor(file: string, groups: Map<string, Record<string, string>>) {
    this.file = file
    this.groups = groups
  }

  static async load(dataDir: string): Promise<FileGroupConfigStorage> {
    const file = join(dataDir, GROUP_CONFIGS_FILE)
    let text: string | null = null
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new StorageError('STORAGE_ERROR', `cannot read ${file}: ${(err as Error).message}`, { cause: err })
    }
    return new FileGroupConfigStorage(file, text === null ? new Map() : parseGroupConfigs(text, file))
  }

  get(groupId: string): Promise<Record<string, string>> {
    return Promise.resolve({ ...(this.groups.get(groupId) ?? {}) })
  }

  set(groupId: string, configs: Record<string, string>): Promise<void> {
    const write = this.writing.then(async () => {
      const next = new Map(this.groups)
      if (Object.keys(configs).length === 0) next.delete(groupId)
      else next.set(groupId, { ...configs })
      const stored: StoredGroupConfigs = { version: 1, groups: Object.fromEntries([...next].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) }
      await writeFileDurably(this.file, JSON.stringify(stored, null, 2) + '\n')
      // Seen only once durable.
      if (Object.keys(configs).length === 0) this.groups.delete(groupId)
      else this.groups.set(groupId, { ...configs })
    })
    this.writing = write.catch(() => {})
    return write
  }
}

function parseGroupConfigs(text: string, file: string): Map<string, Record<string, string>> {
  const bad = (why: string) =>
    new StorageError(
      'STORAGE_ERROR',
      `${file} is not a valid group configs file (${why}): restore it from a backup or repair it by hand ({ "version": 1, "groups": { "<group>": { "<config>": "<value>" } } }). No data was touched.`,
    )
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw bad((err as Error).message)
  }
  const stored = parsed as StoredGroupConfigs
  if (typeof stored !== 'object' || stored === null || stored.version !== 1 || typeof stored.groups !== 'object' || stored.groups === null) throw bad('no version 1 groups')
  const groups = new Map<string, Record<string, string>>()
  for (const [groupId, configs] of Object.entries(stored.groups)) {
    if (typeof configs !== 'object' || configs === null || Object.values(configs).some((v) => typeof v !== 'string')) throw bad(`group ${groupId}`)
    groups.set(groupId, { ...configs })
  }
  return groups
}
