/**
 * Resolves a token's key from a refreshed HTTP(S) JWKS (Kafka's
 * RefreshingHttpsJwksVerificationKeyResolver): jose selects the key by kid, key type and use;
 * when none matches, an early refresh is asked for (rate-limited per kid by RefreshingHttpsJwks)
 * and, when one runs, the key is looked up once more in the refreshed set.
 */
import type { FlattenedJWSInput, JWSHeaderParameters } from 'jose' with { 'resolution-mode': 'import' }
import type { RefreshingHttpsJwks } from './refreshing-https-jwks.js'
import { describeHeader, isNoMatchingKey, UnresolvableKeyError, type VerificationKey, type VerificationKeyResolver } from './verification-key-resolver.js'

export class RefreshingHttpsJwksVerificationKeyResolver implements VerificationKeyResolver {
  constructor(private readonly jwks: RefreshingHttpsJwks) {}

  init(): Promise<void> {
    return this.jwks.init()
  }

  async resolveKey(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<VerificationKey> {
    try {
      return await this.jwks.keySet()(header, token)
    } catch (err) {
      if (!isNoMatchingKey(err)) throw err
    }
    const refreshed = this.jwks.maybeExpediteRefresh(typeof header.kid === 'string' ? header.kid : '')
    if (refreshed) {
      await refreshed
      try {
        return await this.jwks.keySet()(header, token)
      } catch (err) {
        if (!isNoMatchingKey(err)) throw err
      }
    }
    throw new UnresolvableKeyError(`Unable to find a suitable verification key for JWS w/ header ${describeHeader(header)} obtained from ${this.jwks.location}`)
  }

  close(): void {
    this.jwks.close()
  }
}
