/**
 * Resolves a token's key from a JWKS file (`sasl.oauthbearer.jwks.endpoint.url=file:/path`;
 * Kafka's JwksFileVerificationKeyResolver over a CachedFile): read at start (a missing or invalid
 * file stops the broker), read again when its modification time or size changes, so a rotated
 * file is picked up without a restart. A kid not in the file is refused; nothing is fetched.
 */
import { readFile, stat } from 'node:fs/promises'
import type { FlattenedJWSInput, JWSHeaderParameters } from 'jose' with { 'resolution-mode': 'import' }
import { describeHeader, isNoMatchingKey, localKeySet, UnresolvableKeyError, type LocalKeySet, type VerificationKey, type VerificationKeyResolver } from './verification-key-resolver.js'

export class JwksFileVerificationKeyResolver implements VerificationKeyResolver {
  private keys: LocalKeySet | undefined
  private version = ''

  constructor(readonly path: string) {}

  async init(): Promise<void> {
    await this.reloadIfChanged()
  }

  async resolveKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<VerificationKey> {
    try {
      await this.reloadIfChanged()
    } catch {
      // The file went bad after start: keep the keys read before, as Kafka keeps its snapshot.
    }
    try {
      return await this.keys!(header, token)
    } catch (err) {
      if (isNoMatchingKey(err)) throw new UnresolvableKeyError(`Unable to find a suitable verification key for JWS w/ header ${describeHeader(header)} in ${this.path}`)
      throw err
    }
  }

  close(): void {}

  private async reloadIfChanged(): Promise<void> {
    const s = await stat(this.path)
    if (!s.isFile()) throw new Error(`${this.path} is not a file`)
    const version = `${s.mtimeMs}:${s.size}`
    if (version === this.version && this.keys) return
    this.keys = await localKeySet(JSON.parse(await readFile(this.path, 'utf8')))
    this.version = version
  }
}
