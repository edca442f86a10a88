/**
 * A standalone broker's client quotas (ts/quota/client-quota-storage.ts):
 * `<dataDir>/ferrolog-client-quotas.json` in the form of ts/quota/client-quotas-image.ts,
 * rewritten whole and atomically (tmp, fsync, rename) on every change, one change at a time; the
 * image shows a change only once the file holds it, so a quota acknowledged to AlterClientQuotas
 * survives kill -9. No file: no quotas. A file that does not parse refuses the start
 * (StorageError naming the file), as the ACLs file does.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ClientQuotaStorage } from '../quota/client-quota-storage.js'
import { ClientQuotasImage, type ClientQuotaChange } from '../quota/client-quotas-image.js'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'

export const CLIENT_QUOTAS_FILE = 'ferrolog-client-quotas.json'

export class FileClientQuotaStorage implements ClientQuotaStorage {
  image: ClientQuotasImage
  private readonly file: string
  private writing: Promise<unknown> = Promise.resolve()
  private readonly listeners: Array<(image: ClientQuotasImage) => void> = []

  private constructor(file: string, image: ClientQuotasImage) {
    this.file = file
    this.image = image
  }

  static async load(dataDir: string): Promise<FileClientQuotaStorage> {
    const file = join(dataDir, CLIENT_QUOTAS_FILE)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new FileClientQuotaStorage(file, ClientQuotasImage.EMPTY)
      throw new StorageError('STORAGE_ERROR', `cannot read ${file}: ${(err as Error).message}`, { cause: err })
    }
    try {
      return new FileClientQuotaStorage(file, ClientQuotasImage.parse(text, file))
    } catch (err) {
      throw new StorageError('STORAGE_ERROR', `${(err as Error).message}: restore it from a backup or repair it by hand. No data was touched.`, { cause: err })
    }
  }

  update<T>(decide: (current: ClientQuotasImage) => { changes: ClientQuotaChange[]; result: T }): Promise<T> {
    const run = this.writing.then(async () => {
      const { changes, result } = decide(this.image)
      if (changes.length === 0) return result
      const next = this.image.apply(changes)
      await writeFileDurably(this.file, next.format())
      this.image = next
      for (const listener of this.listeners) listener(next)
      return result
    })
    this.writing = run.catch(() => {})
    return run
  }

  onChange(listener: (image: ClientQuotasImage) => void): void {
    this.listeners.push(listener)
  }

  async close(): Promise<void> {}
}
