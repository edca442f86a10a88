/**
 * The topics this broker hosts, with their ids, partition counts and configs: the part of
 * Kafka's metadata log a single broker needs. Kept in `<dataDir>/ferrolog-topics.json`:
 *
 *   { "version": 1, "topics": [ { "name": "orders", "topicId": "<22-char base64url>",
 *       "partitions": 3, "configs": { "retention.ms": "86400000" } } ] }
 *
 * written atomically (tmp, fsync, rename) on every change, one write at a time. The broker makes
 * its changes one at a time too (its admin queue), so a change is computed from the state before it.
 * A file that does not parse as this (truncated, garbage, empty, another version) refuses the
 * start with a StorageError naming the file: the topics cannot be guessed from the partition
 * directories (their configs, retention among them, live only here), and nothing is deleted.
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'
import { uuidFromString, uuidToString } from '../storage/partition-metadata.js'

export const TOPICS_FILE = 'ferrolog-topics.json'

export interface TopicInfo {
  name: string
  topicId: Buffer
  partitions: number
  configs: Record<string, string>
}

interface StoredTopics {
  version: 1
  topics: Array<{ name: string; topicId: string; partitions: number; configs: Record<string, string> }>
}

/** The topics as the request handlers read them: a standalone broker's TopicStore, or a cluster's metadata. */
export interface TopicCatalog {
  get(name: string): TopicInfo | undefined
  getById(topicId: Buffer): TopicInfo | undefined
  all(): TopicInfo[]
}

export class TopicStore implements TopicCatalog {
  private readonly file: string
  private readonly byName = new Map<string, TopicInfo>()
  private readonly byId = new Map<string, TopicInfo>()

  private constructor(dataDir: string) {
    this.file = join(dataDir, TOPICS_FILE)
  }

  static async load(dataDir: string): Promise<TopicStore> {
    const store = new TopicStore(dataDir)
    let text: string | null = null
    try {
      text = await readFile(store.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    if (text !== null) for (const topic of parseTopics(text, store.file)) store.index(topic)
    return store
  }

  get(name: string): TopicInfo | undefined {
    return this.byName.get(name)
  }

  getById(topicId: Buffer): TopicInfo | undefined {
    return this.byId.get(topicId.toString('hex'))
  }

  all(): TopicInfo[] {
    return [...this.byName.values()]
  }

  /**
   * Records a new topic (its id made by the caller, whose logs already exist): the file is
   * written first, and the topic is seen (get, all) only once it is durable.
   */
  async create(topic: TopicInfo): Promise<void> {
    await this.change(() => {
      if (this.byName.has(topic.name)) throw new Error(`topic ${topic.name} exists`)
      return [...this.all(), topic]
    })
    this.index(topic)
  }

  async setPartitions(name: string, partitions: number): Promise<void> {
    const topic = this.byName.get(name)
    if (!topic) throw new Error(`no topic ${name}`)
    await this.change(() => this.all().map((t) => (t === topic ? { ...t, partitions } : t)))
    topic.partitions = partitions
  }

  /** Replaces a topic's config overrides (AlterConfigs). */
  async setConfigs(name: string, configs: Record<string, string>): Promise<void> {
    const topic = this.byName.get(name)
    if (!topic) throw new Error(`no topic ${name}`)
    await this.change(() => this.all().map((t) => (t === topic ? { ...t, configs: { ...configs } } : t)))
    topic.configs = { ...configs }
  }

  async delete(name: string): Promise<void> {
    const topic = this.byName.get(name)
    if (!topic) return
    await this.change(() => this.all().filter((t) => t !== topic))
    this.byName.delete(name)
    this.byId.delete(topic.topicId.toString('hex'))
  }

  private index(topic: TopicInfo): void {
    this.byName.set(topic.name, topic)
    this.byId.set(topic.topicId.toString('hex'), topic)
  }

  /**
   * Writes the topic list `next` makes of the current one, one write at a time: writes share
   * the file's .tmp, so a write starts only after the one before it has been renamed (and a
   * failed write leaves the file as it was and the next one free to go). The caller applies the
   * change to the index once this resolves.
   */
  private change(next: () => TopicInfo[]): Promise<void> {
    const run = this.writes.then(() => this.save(next()))
    this.writes = run.catch(() => undefined)
    return run
  }

  private writes: Promise<void> = Promise.resolve()

  private async save(topics: TopicInfo[]): Promise<void> {
    const stored: StoredTopics = {
      version: 1,
      topics: topics.map((t) => ({ name: t.name, topicId: uuidToString(t.topicId), partitions: t.partitions, configs: t.configs })),
    }
    await writeFileDurably(this.file, JSON.stringify(stored, null, 2) + '\n')
  }
}

/** The topics of a topics file; throws a StorageError naming the file, what is wrong and what to do. */
function parseTopics(text: string, file: string): TopicInfo[] {
  const fail = (why: string): never => {
    throw new StorageError(
      'STORAGE_ERROR',
      `${file} is not a valid topics file (${why}). It lists this data directory's topics (names, ids, partition counts, configs) ` +
        `and the broker will not start without them rather than guess them: restore the file from a backup or repair it by hand ` +
        `({ "version": 1, "topics": [ { "name", "topicId", "partitions", "configs" } ] }). No data was touched.`,
    )
  }
  let stored: unknown
  try {
    stored = JSON.parse(text)
  } catch (err) {
    fail(text.trim() === '' ? 'it is empty' : `it is not JSON: ${(err as Error).message}`)
  }
  const s = stored as Partial<StoredTopics> | null
  if (typeof s !== 'object' || s === null) fail('it is not a JSON object')
  if (s!.version !== 1) fail(`unknown version ${JSON.stringify(s!.version)}`)
  if (!Array.isArray(s!.topics)) fail('"topics" is not an array')
  return s!.topics!.map((t, i) => {
    const at = `topic ${i}`
    if (typeof t !== 'object' || t === null) fail(`${at} is not an object`)
    if (typeof t.name !== 'string' || t.name === '') fail(`${at} has no name`)
    if (!Number.isInteger(t.partitions) || t.partitions < 1) fail(`topic ${t.name} has ${JSON.stringify(t.partitions)} partitions`)
    const configs = t.configs ?? {}
    if (typeof configs !== 'object' || Object.values(configs).some((v) => typeof v !== 'string')) fail(`topic ${t.name} has configs that are not strings`)
    let topicId: Buffer
    try {
      topicId = uuidFromString(String(t.topicId))
    } catch {
      return fail(`topic ${t.name} has no valid topic id`)
    }
    return { name: t.name, topicId, partitions: t.partitions, configs: { ...configs } }
  })
}

/** A random topic id, never the all-zero "no id" (Kafka's Uuid.randomUuid avoids it too). */
export function newTopicId(): Buffer {
  for (;;) {
    const id = randomBytes(16)
    if (id.some((b) => b !== 0)) return id
  }
}
