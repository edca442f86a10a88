/**
 * Producer ids for idempotent producers (Kafka's `ProducerIdManager`). Kafka's brokers take blocks
 * of 1000 ids from the controller; here the block is reserved in a file of the data dir before
 * any id of it is handed out, so that a restart (clean or not) never hands out an id twice:
 *
 *   <dataDir>/ferrolog-producer-ids.json   { "version": 1, "nextBlockStart": "3000" }
 *
 * written atomically (tmp, fsync, rename). A restart skips what was left of the last block.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileDurably } from '../storage/checkpoint-file.js'

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
    let start = 0n
    try {
      const stored = JSON.parse(await readFile(file, 'utf8')) as StoredProducerIds
      if (stored.version !== 1) throw new Error(`${file}: unknown version ${stored.version}`)
      start = BigInt(stored.nextBlockStart)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    return new ProducerIdManager(file, start)
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
