/**
 * OAUTHBEARER's login with a token from an OAuth server, as Kafka's
 * OAuthBearerLoginCallbackHandler (KIP-768) and librdkafka's `sasl.oauthbearer.method=oidc`:
 * the client credentials grant (client-credentials-jwt-retriever.ts) gives a JWT; its claims are
 * read as Kafka's ClientJwtValidator reads them (no signature check: the broker verifies it),
 * through the `jose` library:
 *
 *   exp                  required, seconds since the epoch: when the token expires
 *   iat                  optional: when it was issued (the refresh window starts there)
 *   <sub claim name>     required, a non-blank string: the principal (sasl.oauthbearer.sub.claim.name, "sub")
 *   <scope claim name>   optional, a space-separated string or a list (sasl.oauthbearer.scope.claim.name, "scope")
 *
 * The token is kept fresh by expiring-credential-refreshing-login.ts; each SASL exchange sends
 * the current one with the login's SASL extensions (Kafka's `extension_<name>` JAAS options,
 * librdkafka's sasl.oauthbearer.extensions).
 */
import type { Logger } from '../../logger.js'
import { loadJose } from '../../security/oauthbearer/jose.js'
import { ClientCredentialsJwtRetriever, JwtRetrieverError, type ClientCredentialsOptions } from './client-credentials-jwt-retriever.js'
import { ExpiringCredentialRefreshingLogin, type ExpiringCredential, type RefreshConfig } from './expiring-credential-refreshing-login.js'
import type { OAuthBearerToken } from './oauth-bearer-sasl-client.js'

export interface OAuthBearerLoginOptions extends ClientCredentialsOptions {
  subClaimName: string
  scopeClaimName: string
  extensions?: Record<string, string>
  refresh: RefreshConfig
  logger?: Logger
}

/** A token whose claims the client cannot use (Kafka's JwtValidatorException). */
export class JwtValidatorError extends Error {
  constructor(message: string) {
    super(`Could not validate the access token: ${message}`)
    this.name = 'JwtValidatorError'
  }
}

/** The claims of `jwt` as Kafka's ClientJwtValidator reads them (see the module comment). */
export async function clientJwtCredential(jwt: string, subClaimName: string, scopeClaimName: string): Promise<ExpiringCredential & { scope: ReadonlySet<string> }> {
  const jose = await loadJose()
  let claims: Record<string, unknown>
  try {
    claims = jose.decodeJwt(jwt)
  } catch (err) {
    throw new JwtValidatorError((err as Error).message)
  }
  const exp = claims.exp
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new JwtValidatorError('exp value must be non-null')
  if (exp < 0) throw new JwtValidatorError(`exp value must be non-negative; value given was "${exp}"`)
  const iat = claims.iat
  if (iat !== undefined && (typeof iat !== 'number' || iat < 0)) throw new JwtValidatorError(`iat value must be null or non-negative; value given was "${String(iat)}"`)
  const sub = claims[subClaimName]
  if (typeof sub !== 'string' || sub.trim() === '') throw new JwtValidatorError(`${subClaimName} value must be non-null and non-empty`)
  const rawScope = claims[scopeClaimName]
  const scope = new Set(typeof rawScope === 'string' ? rawScope.split(' ').filter((s) => s !== '') : Array.isArray(rawScope) ? rawScope.map(String) : [])
  return { value: jwt, principalName: sub.trim(), expireTimeMs: Math.floor(exp * 1000), startTimeMs: typeof iat === 'number' ? Math.floor(iat * 1000) : undefined, scope }
}

/** The client credentials login of one client's settings; its provider() is an OAuthBearerProvider. */
export class OAuthBearerLogin {
  readonly retriever: ClientCredentialsJwtRetriever
  readonly refreshing: ExpiringCredentialRefreshingLogin
  private readonly extensions: Record<string, string> | undefined

  constructor(options: OAuthBearerLoginOptions) {
    this.retriever = new ClientCredentialsJwtRetriever(options)
    this.extensions = options.extensions
    const login = async () => clientJwtCredential(await this.retriever.retrieve(), options.subClaimName, options.scopeClaimName)
    this.refreshing = new ExpiringCredentialRefreshingLogin(login, options.refresh, options.logger)
  }

  /** The current token for a SASL exchange; a failed login rejects with why (never a secret). */
  async token(): Promise<OAuthBearerToken> {
    try {
      const credential = await this.refreshing.credential()
      return this.extensions ? { value: credential.value, extensions: this.extensions } : { value: credential.value }
    } catch (err) {
      if (err instanceof JwtRetrieverError || err instanceof JwtValidatorError) throw new OAuthBearerLoginError(`OAuth login failed: ${err.message}`, err)
      throw err
    }
  }

  close(): void {
    this.refreshing.close()
  }
}

/** The login could not get a usable token (Kafka's LoginException). */
export class OAuthBearerLoginError extends Error {
  constructor(message: string, cause: Error) {
    super(message, { cause })
    this.name = 'OAuthBearerLoginError'
  }
}
