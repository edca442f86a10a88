/**
 * A standalone broker's finalized features (./finalized-features.ts): `<dataDir>/ferrolog-features.json`,
 * `{ "version": 1, "epoch": N, "features": { ... } }`, rewritten whole and atomically (tmp,
 * fsync, rename) on every change, one change at a time, the epoch one more each time; a change
 * is seen only once the file holds it, so a level acknowledged to UpdateFeatures survives
 * kill -9. No file: Kafka 4.4's levels of a new cluster, epoch 0.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'
import { formatFeatureLevels, parseFeatureLevels, type FeatureLevels, type FeatureStorage } from '../features/feature-levels.js'
import { defaultLevels } from './finalized-features.js'

export const FEATURES_FILE = 'ferrolog-features.json'

export class FileFeatureStorage implements FeatureStorage {
  private readonly file: string
  private current: FeatureLevels = { epoch: 0n, levels: defaultLevels() }
  /** The change under way: the next one starts from what it wrote. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(dataDir: string) {
    this.file = join(dataDir, FEATURES_FILE)
  }

  async load(): Promise<FeatureLevels> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.current
      throw new StorageError('STORAGE_ERROR', `cannot read ${this.file}: ${(err as Error).message}`, { cause: err })
    }
    try {
      const { levels, json } = parseFeatureLevels(text, this.file, defaultLevels())
      const epoch = json.epoch
      if (!Number.isSafeInteger(epoch) || (epoch as number) < 0) throw new Error(`${this.file} has no valid epoch`)
      this.current = { epoch: BigInt(epoch as number), levels }
    } catch (err) {
      throw new StorageError('STORAGE_ERROR', `${(err as Error).message}: restore it from a backup or repair it by hand. No data was touched.`, { cause: err })
    }
    return this.current
  }

  update(change: (current: FeatureLevels) => ReadonlyMap<string, number> | null): Promise<FeatureLevels> {
    const run = this.queue.then(async () => {
      const levels = change(this.current)
      if (levels === null) return this.current
      const next: FeatureLevels = { epoch: this.current.epoch + 1n, levels: new Map(levels) }
      await writeFileDurably(this.file, formatFeatureLevels(next.levels, { epoch: Number(next.epoch) }))
      this.current = next
      return next
    })
    this.queue = run.catch(() => undefined)
    return run
  }
}
