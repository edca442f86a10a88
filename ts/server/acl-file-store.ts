/**
 * A standalone broker's ACLs (the StandardAuthorizer's `AclStorage`): `<dataDir>/ferrolog-acls.json`
 * in the format of ts/security/authorizer/acl-json.ts, rewritten whole and atomically (tmp,
 * fsync, rename) on every change, one change at a time; a change is seen by the authorizer only
 * once the file holds it, so an ACL acknowledged to CreateAcls survives kill -9. No file: no ACLs.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { formatAcls, parseAcls } from '../security/authorizer/acl-json.js'
import type { AclBinding } from '../security/authorizer/acl.js'
import type { AclStorage } from '../security/authorizer/standard-authorizer.js'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'

export const ACLS_FILE = 'ferrolog-acls.json'

export class FileAclStorage implements AclStorage {
  private readonly file: string
  private current: AclBinding[] = []

  constructor(dataDir: string) {
    this.file = join(dataDir, ACLS_FILE)
  }

  async load(): Promise<AclBinding[]> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return (this.current = [])
      throw new StorageError('STORAGE_ERROR', `cannot read ${this.file}: ${(err as Error).message}`, { cause: err })
    }
    try {
      this.current = parseAcls(text, this.file)
    } catch (err) {
      throw new StorageError('STORAGE_ERROR', `${(err as Error).message}: restore it from a backup or repair it by hand. No data was touched.`, { cause: err })
    }
    return this.current
  }

  /** The authorizer runs its changes one at a time, so each starts from the one before. */
  async update(change: (current: readonly AclBinding[]) => AclBinding[]): Promise<AclBinding[]> {
    const next = change(this.current)
    await writeFileDurably(this.file, formatAcls(next))
    this.current = next
    return next
  }
}
