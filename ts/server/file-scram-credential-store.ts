/**
 * A standalone broker's SCRAM credentials (ts/security/scram/scram-credential-store.ts), in
 * `<dataDir>/ferrolog-scram-credentials.json`, mode 0600, written atomically (tmp with mode 0600,
 * fsync, rename) on every change, one write at a time; the cache sees a change only once it is
 * durable, so a broker killed at any point restarts with the credentials it last acknowledged.
 *
 *   { "version": 1,
 *     "credentials": {
 *       "SCRAM-SHA-256": { "alice": { "salt": "<base64>", "storedKey": "<base64>", "serverKey": "<base64>", "iterations": 8192 } },
 *       "SCRAM-SHA-512": { ... } } }
 *
 * What Kafka keeps (UserScramCredentialRecord): salt, StoredKey, ServerKey and the iteration
 * count, never a password nor a salted password. StoredKey and ServerKey are still secrets (an
 * offline attack on the password; impersonating the broker): the file is the broker's alone and
 * its contents are never logged. A file that does not parse as this refuses the start
 * (StorageError naming the file), as the topics file does.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CredentialCache } from '../security/scram/credential-cache.js'
import type { ScramCredentialChange } from '../security/scram/scram-control-manager.js'
import type { ScramCredential } from '../security/scram/scram-credential.js'
import type { ScramCredentialStore } from '../security/scram/scram-credential-store.js'
import { isScram } from '../security/scram/scram-mechanism.js'
import { writeFileDurably } from '../storage/checkpoint-file.js'
import { StorageError } from '../storage/errors.js'

export const SCRAM_CREDENTIALS_FILE = 'ferrolog-scram-credentials.json'

interface StoredCredential {
  salt: string
  storedKey: string
  serverKey: string
  iterations: number
}

interface StoredScramCredentials {
  version: 1
  /** mechanism name -> user -> credential */
  credentials: Record<string, Record<string, StoredCredential>>
}

export class FileScramCredentialStore implements ScramCredentialStore {
  readonly cache: CredentialCache
  private readonly file: string
  /** Updates one at a time, each from the state after the one before. */
  private writing: Promise<unknown> = Promise.resolve()

  private constructor(file: string, cache: CredentialCache) {
    this.file = file
    this.cache = cache
  }

  static async load(dataDir: string): Promise<FileScramCredentialStore> {
    const file = join(dataDir, SCRAM_CREDENTIALS_FILE)
    const cache = new CredentialCache()
    let text: string | null = null
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new StorageError('STORAGE_ERROR', `cannot read ${file}: ${(err as Error).message}`, { cause: err })
    }
    if (text !== null) cache.replaceAll(parseScramCredentials(text, file))
    return new FileScramCredentialStore(file, cache)
  }

  update<T>(decide: (current: CredentialCache) => { changes: ScramCredentialChange[]; result: T }): Promise<T> {
    const run = this.writing.then(async () => {
      const { changes, result } = decide(this.cache)
      if (changes.length === 0) return result
      const next = new CredentialCache()
      next.replaceAll(this.cache.entries())
      for (const c of changes) next.update(c.mechanismName, c.username, c.credential)
      await writeFileDurably(this.file, formatScramCredentials(next), 0o600)
      // Seen only once durable.
      for (const c of changes) this.cache.update(c.mechanismName, c.username, c.credential)
      return result
    })
    this.writing = run.catch(() => {})
    return run
  }

  close(): void {}
}

function formatScramCredentials(cache: CredentialCache): string {
  const credentials: StoredScramCredentials['credentials'] = {}
  const sorted = [...cache.entries()].sort((a, b) => (a.mechanismName + '\0' + a.username < b.mechanismName + '\0' + b.username ? -1 : 1))
  for (const { mechanismName, username, credential } of sorted) {
    ;(credentials[mechanismName] ??= {})[username] = {
      salt: credential.salt.toString('base64'),
      storedKey: credential.storedKey.toString('base64'),
      serverKey: credential.serverKey.toString('base64'),
      iterations: credential.iterations,
    }
  }
  return JSON.stringify({ version: 1, credentials } satisfies StoredScramCredentials, null, 2) + '\n'
}

function parseScramCredentials(text: string, file: string): Array<{ mechanismName: string; username: string; credential: ScramCredential }> {
  // The reason never quotes the file: it holds secrets.
  const bad = (why: string) =>
    new StorageError(
      'STORAGE_ERROR',
      `${file} is not a valid SCRAM credentials file (${why}): restore it from a backup, or remove it and set the credentials again with kafka-configs.sh. No data was touched.`,
    )
  let parsed: StoredScramCredentials
  try {
    parsed = JSON.parse(text) as StoredScramCredentials
  } catch {
    throw bad('not JSON')
  }
  if (typeof parsed !== 'object' || parsed === null || parsed.version !== 1 || typeof parsed.credentials !== 'object' || parsed.credentials === null) {
    throw bad('no version 1 credentials')
  }
  const out: Array<{ mechanismName: string; username: string; credential: ScramCredential }> = []
  for (const [mechanismName, users] of Object.entries(parsed.credentials)) {
    if (!isScram(mechanismName)) throw bad(`unknown mechanism ${JSON.stringify(mechanismName)}`)
    for (const [username, c] of Object.entries(users ?? {})) {
      const key = (v: unknown) => (typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v) ? Buffer.from(v, 'base64') : null)
      const salt = key(c?.salt)
      const storedKey = key(c?.storedKey)
      const serverKey = key(c?.serverKey)
      if (!salt || !storedKey || !serverKey || !Number.isInteger(c.iterations) || c.iterations <= 0) throw bad(`bad credential of a user for ${mechanismName}`)
      out.push({ mechanismName, username, credential: { salt, storedKey, serverKey, iterations: c.iterations } })
    }
  }
  return out
}
