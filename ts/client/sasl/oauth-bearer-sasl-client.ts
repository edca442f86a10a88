/**
 * SASL OAUTHBEARER (RFC 7628), client side, as Kafka's OAuthBearerSaslClient:
 *
 *   initial response   n,,\x01auth=Bearer <token>\x01[<key>=<value>\x01]...\x01
 *
 * (GS2 header "n,,": no channel binding, no authorization id; Kafka's SASL extensions follow
 * the auth field.) The server answers with empty bytes on success; on failure it sends an
 * error challenge (JSON: `{"status":"invalid_token",...}`), which the client acknowledges
 * with a single \x01 before the server fails the exchange (RFC 7628 section 3.2.3).
 *
 * The token comes from a provider (kafkajs's oauthBearerProvider: a function resolving to
 * `{ value }`), asked again at each (re-)authentication so a refreshed token is used (an OAuth
 * login's provider: oauth-bearer-login.ts); a provider that fails fails the exchange. For tests
 * against Kafka's unsecured validator, `unsecuredJwt` builds what Kafka's
 * OAuthBearerUnsecuredLoginCallbackHandler builds: an unsigned JWS (header `{"alg":"none"}`,
 * claims sub, iat, exp and optional scope, an empty signature).
 */
import { SaslClientError, type SaslClient } from './sasl-client.js'

export interface OAuthBearerToken {
  /** The compact JWS (or any bearer token the broker validates). */
  value: string
  /** Kafka's SASL extensions (KIP-342), sent after the token. */
  extensions?: Record<string, string>
}

export type OAuthBearerProvider = () => OAuthBearerToken | Promise<OAuthBearerToken>

export interface UnsecuredJwtOptions {
  /** The `sub` claim: the principal name Kafka's unsecured validator takes. */
  principal: string
  /** The `scope` claim (a list). */
  scope?: string[]
  /** Seconds until `exp` (default 3600, as Kafka's unsecuredLoginLifetimeSeconds). */
  lifeSeconds?: number
}

const KVSEP = '\x01'
// RFC 7628: key = 1*(ALPHA); Kafka's extension names: [A-Za-z]+, "auth" reserved.
const EXTENSION_KEY = /^[A-Za-z]+$/
const EXTENSION_VALUE = /^[\x21-\x7e \t\r\n]*$/

/** An unsigned JWS as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes (for tests only). */
export function unsecuredJwt(options: UnsecuredJwtOptions): string {
  const iat = Math.floor(Date.now() / 1000)
  const claims: Record<string, unknown> = { iat, exp: iat + (options.lifeSeconds ?? 3600), sub: options.principal }
  if (options.scope) claims.scope = options.scope
  const part = (o: object) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url')
  return `${part({ alg: 'none' })}.${part(claims)}.`
}

export class OAuthBearerSaslClient implements SaslClient {
  readonly mechanism = 'OAUTHBEARER'
  private readonly provider: OAuthBearerProvider
  private state: 'initial' | 'sent' | 'error-acknowledged' | 'complete' = 'initial'

  constructor(provider: OAuthBearerProvider) {
    this.provider = provider
  }

  get complete(): boolean {
    return this.state === 'complete'
  }

  async initialResponse(): Promise<Buffer> {
    let token: OAuthBearerToken
    try {
      token = await this.provider()
    } catch (err) {
      // The provider's failure (an OAuth login's names no secret) fails this exchange.
      throw new SaslClientError(`OAUTHBEARER: no token: ${(err as Error).message}`, { cause: err })
    }
    if (typeof token?.value !== 'string' || token.value === '' || /\s/.test(token.value) || token.value.includes(KVSEP)) {
      throw new SaslClientError('OAUTHBEARER: the token provider gave no usable token')
    }
    let message = `n,,${KVSEP}auth=Bearer ${token.value}${KVSEP}`
    for (const [key, value] of Object.entries(token.extensions ?? {})) {
      if (!EXTENSION_KEY.test(key) || key === 'auth' || !EXTENSION_VALUE.test(value)) throw new SaslClientError(`OAUTHBEARER: an invalid SASL extension ${key}`)
      message += `${key}=${value}${KVSEP}`
    }
    this.state = 'sent'
    return Buffer.from(message + KVSEP, 'utf8')
  }

  evaluateChallenge(challenge: Buffer): Promise<Buffer | null> {
    if (this.state !== 'sent') return Promise.reject(new SaslClientError(`OAUTHBEARER: unexpected challenge in state ${this.state}`))
    if (challenge.length === 0) {
      this.state = 'complete'
      return Promise.resolve(null)
    }
    // The server's error: acknowledged, and the server then fails the exchange with its message.
    this.state = 'error-acknowledged'
    return Promise.resolve(Buffer.from(KVSEP))
  }
}
