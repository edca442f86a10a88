/**
 * Producer ids for idempotent producers (Kafka's `ProducerIdManager`). Kafka's brokers take blocks
 * of 1000 ids from the controller; here a block is reserved from a `ProducerIdBlockSource`
 * before any id of it is handed out, so that a restart (clean or not) never hands out an id
 * twice. A standalone broker reserves it in a file of its data dir:
 *
 *   <dataDir>/ferrolog-producer-ids.json   { "version": 1, "nextBlockStart": "3000" }
 *
 * written atomically (tmp, fsync, rename). A restart skips what was left of the last block. A
 * file that does not parse as this (truncated, garbage, empty, another version) refuses the start
 * with a StorageError naming the file: guessing the next block could hand out an id twice.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'

export const PRODUCER_IDS_FILE = 'ferrolog-producer-ids.json'
/** Kafka's `ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`. */
export const PRODUCER_ID_BLOCK_SIZE = 1000n

interface StoredProducerIds {
  version: 1
  nextBlockStart: string
}

/**
 * Where blocks of producer ids come from: the data dir's file (a standalone broker,
 * `ProducerIdFile`), or the cluster's metadata (ts/cluster/), which hands each block to one
 * broker only.
 */
export interface ProducerIdBlockSource {
  /** Reserves the next block of `size` ids durably (never to be handed out again); its first id. */
  reserveBlock(size: bigint): Promise<bigint>
}

/** A standalone broker's block source: the file above. */
export class ProducerIdFile implements ProducerIdBlockSource {
  private readonly file: string
  private nextBlockStart: bigint

  private constructor(file: string, nextBlockStart: bigint) {
    this.file = file
    this.nextBlockStart = nextBlockStart
  }

  static async load(dataDir: string): Promise<ProducerIdFile> {
    const file = join(dataDir, PRODUCER_IDS_FILE)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new ProducerIdFile(file, 0n)
      throw new StorageError('STORAGE_ERROR', `cannot read ${file}: ${(err as Error).message}`, { cause: err })
    }
    return new ProducerIdFile(file, parseNextBlockStart(text, file))
  }

  async reserveBlock(size: bigint): Promise<bigint> {
    const start = this.nextBlockStart
    const stored: StoredProducerIds = { version: 1, nextBlockStart: (start + size).toString() }
    await writeFileDurably(this.file, JSON.stringify(stored) + '\n')
    this.nextBlockStart = start + size
    return start
  }
}

export class ProducerIdManager {
  private readonly source: ProducerIdBlockSource
  private next = 0n
  /** Ids below this (from `next` on) are reserved for this broker. */
  private blockEnd = 0n
  private queue: Promise<unknown> = Promise.resolve()

  constructor(source: ProducerIdBlockSource) {
    this.source = source
  }

  /** A standalone broker's manager, over the data dir's file. */
  static async load(dataDir: string): Promise<ProducerIdManager> {
    return new ProducerIdManager(await ProducerIdFile.load(dataDir))
  }

  /** A producer id never handed out before (by this data dir, or in the cluster). */
  generateProducerId(): Promise<bigint> {
    const result = this.queue.then(async () => {
      if (this.next >= this.blockEnd) {
        const start = await this.source.reserveBlock(PRODUCER_ID_BLOCK_SIZE)
        this.next = start
        this.blockEnd = start + PRODUCER_ID_BLOCK_SIZE
      }
      return this.next++
    })
    this.queue = result.catch(() => undefined)
    return result
  }
}

/** The next block's start of a producer id file; throws a StorageError naming the file, what is wrong and what to do. */
function parseNextBlockStart(text: string, file: string): bigint {
  const fail = (why: string): never => {
    throw new StorageError(
      'STORAGE_ERROR',
      `${file} is not a valid producer id file (${why}). It records the producer ids already handed out, and the broker will ` +
        `not start without it rather than risk handing one out twice: restore it from a backup or repair it by hand ` +
        `({ "version": 1, "nextBlockStart": "<a multiple of ${PRODUCER_ID_BLOCK_SIZE} above every producer id handed out>" }). No data was touched.`,
    )
  }
  let stored: Partial<StoredProducerIds> | null
  try {
    stored = JSON.parse(text) as Partial<StoredProducerIds> | null
  } catch (err) {
    return fail(text.trim() === '' ? 'it is empty' : `it is not JSON: ${(err as Error).message}`)
  }
  if (typeof stored !== 'object' || stored === null) fail('it is not a JSON object')
  if (stored!.version !== 1) fail(`unknown version ${JSON.stringify(stored!.version)}`)
  if (typeof stored!.nextBlockStart !== 'string' || !/^\d+$/.test(stored!.nextBlockStart)) fail(`"nextBlockStart" is ${JSON.stringify(stored!.nextBlockStart)}, not a decimal string`)
  return BigInt(stored!.nextBlockStart!)
}
