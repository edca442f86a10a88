/**
 * The cleaner's map of the latest offset per key (Kafka's `SkimpyOffsetMap`), twin of
 * crates/storage/src/cleaner/offset_map.rs. Fixed memory: `memory / 24` slots of
 *
 *   0(16) MD5 digest of the key    16(8) offset, big-endian
 *
 * Keys are known by digest only (24 bytes a key whatever its length). Attempt i probes the slot
 * named by the 4 digest bytes at min(i, 12) plus max(0, i - 12), modulo the slots; an all-zero
 * slot is empty. Full at slots * 0.9 entries (log.cleaner.io.buffer.load.factor).
 */
import { createHash } from 'node:crypto'

export const HASH_SIZE = 16
export const ENTRY_SIZE = HASH_SIZE + 8
export const DEFAULT_LOAD_FACTOR = 0.9

export class SkimpyOffsetMap {
  readonly slots: number
  private readonly bytes: Buffer
  private entries = 0
  latestOffset = -1n

  constructor(memory: number) {
    this.slots = Math.max(1, Math.floor(memory / ENTRY_SIZE))
    this.bytes = Buffer.alloc(this.slots * ENTRY_SIZE)
  }

  get size(): number {
    return this.entries
  }

  get memory(): number {
    return this.bytes.length
  }

  maxDesiredSize(loadFactor = DEFAULT_LOAD_FACTOR): number {
    return Math.floor(this.slots * loadFactor)
  }

  clear(): void {
    this.bytes.fill(0)
    this.entries = 0
    this.latestOffset = -1n
  }

  private positionOf(hash: Buffer, attempt: number): number {
    const at = Math.min(attempt, HASH_SIZE - 4)
    const probe = (hash.readInt32BE(at) + Math.max(0, attempt - (HASH_SIZE - 4))) | 0
    return ((probe & 0x7fffffff) % this.slots) * ENTRY_SIZE
  }

  private isEmptyAt(position: number): boolean {
    for (let i = position; i < position + ENTRY_SIZE; i++) if (this.bytes[i] !== 0) return false
    return true
  }

  private hashEquals(hash: Buffer, position: number): boolean {
    return this.bytes.compare(hash, 0, HASH_SIZE, position, position + HASH_SIZE) === 0
  }

  /** Records `offset` as the key's latest offset and moves latestOffset to it. */
  put(key: Buffer, offset: bigint): void {
    if (this.entries >= this.slots) throw new Error('offset map is full')
    const hash = createHash('md5').update(key).digest()
    for (let attempt = 0; ; attempt++) {
      const position = this.positionOf(hash, attempt)
      if (this.isEmptyAt(position)) {
        hash.copy(this.bytes, position)
        this.bytes.writeBigInt64BE(offset, position + HASH_SIZE)
        this.entries++
        break
      }
      if (this.hashEquals(hash, position)) {
        this.bytes.writeBigInt64BE(offset, position + HASH_SIZE)
        break
      }
    }
    this.latestOffset = offset
  }

  /** The key's latest offset, or -1n. */
  get(key: Buffer): bigint {
    const hash = createHash('md5').update(key).digest()
    for (let attempt = 0; attempt <= this.slots + HASH_SIZE; attempt++) {
      const position = this.positionOf(hash, attempt)
      if (this.isEmptyAt(position)) return -1n
      if (this.hashEquals(hash, position)) return this.bytes.readBigInt64BE(position + HASH_SIZE)
    }
    return -1n
  }
}
