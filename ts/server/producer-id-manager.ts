/**
 * Producer ids for idempotent producers (Kafka's `ProducerIdManager`). Kafka's brokers take blocks
 * of 1000 ids from the controller; here the block is reserved in a file of the data dir before
 * any id of it is handed out, so that a restart (clean or not) never hands out an id twice:
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

export class ProducerIdManager {
  private readonly file: string
  private next: bigint
  /** Ids below this are reserved on disk. */
  private blockEnd: bigint
  private queue: Promise<unknown> = Promise.resolve()

  private constructor(file: string, nextBlockStart: bigint) {
    this.file = file
    this.next = nextBlockStart
    this.blockEnd = nextBlockStart
  }

  static async load(dataDir: string): Promise<ProducerIdManager> {
    const file = join(dataDir, PRODUCER_IDS_FILE)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new ProducerIdManager(file, 0n)
      throw new StorageError('STORAGE_ERROR', `cannot read ${file}: ${(err as Error).message}`, { cause: err })
    }
    return new ProducerIdManager(file, parseNextBlockStart(text, file))
  }

  /** A producer id never handed out before by this data dir. */
  generateProducerId(): Promise<bigint> {
    const result = this.queue.then(async () => {
      if (this.next >= this.blockEnd) {
        const end = this.next + PRODUCER_ID_BLOCK_SIZE
        const stored: StoredProducerIds = { version: 1, nextBlockStart: end.toString() }
        await writeFileDurably(this.file, JSON.stringify(stored) + '\n')
        this.blockEnd = end
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
