/**
 * Validates signed JWTs for the broker (Kafka's BrokerJwtValidator behind
 * OAuthBearerValidatorCallbackHandler, KIP-768), with `jose` doing every cryptographic step:
 *
 * 1. the token is three non-empty base64url sections (Kafka's SerializedJwt);
 * 2. `alg: none` is refused (jose4j's DISALLOW_NONE);
 * 3. the signature verifies with the key the resolver finds for the header (kid, alg);
 * 4. `exp` and `iat` are present, now minus the clock skew is before `exp`, `nbf` (when present)
 *    is not after now plus the skew, `exp` is not before `iat`;
 * 5. `iss` is the expected issuer and `aud` holds one of the expected audiences; Kafka 4.4 refuses
 *    to start without them unless `sasl.oauthbearer.allow.unverified.issuer` /
 *    `.allow.unverified.audience` say so;
 * 6. the subject claim (`sasl.oauthbearer.sub.claim.name`) is a non-blank string, the scope claim
 *    a string or a list of non-blank, distinct strings, `exp` and `iat` not negative;
 * 7. ferrolog's `sasl.oauthbearer.expected.scope` (Kafka has none): every item of it is in the
 *    token's scope, else the client is told `insufficient_scope`.
 *
 * Every failure is `invalid_token` (but 7) with a reason for the broker's log; no reason holds the
 * token.
 */
import type { JWTPayload } from 'jose' with { 'resolution-mode': 'import' }
import { loadJose } from './jose.js'
import { invalidToken, OAuthBearerConfigError, type OAuthBearerToken, type OAuthBearerValidationResult, type OAuthBearerValidator } from './oauthbearer-token.js'
import type { VerificationKeyResolver } from './verification-key-resolver.js'

export interface BrokerJwtValidatorOptions {
  /** sasl.oauthbearer.expected.audience: the token's `aud` must hold one of these. */
  expectedAudience: readonly string[]
  /** sasl.oauthbearer.expected.issuer: the token's `iss` must be this. */
  expectedIssuer: string | null
  allowUnverifiedAudience: boolean
  allowUnverifiedIssuer: boolean
  /** sasl.oauthbearer.clock.skew.seconds (30). */
  clockSkewSeconds: number
  /** sasl.oauthbearer.scope.claim.name (`scope`). */
  scopeClaimName: string
  /** sasl.oauthbearer.sub.claim.name (`sub`). */
  subClaimName: string
  /** sasl.oauthbearer.expected.scope (ferrolog's own): scope items every token must hold. */
  requiredScope: readonly string[]
}

const AUDIENCE = 'sasl.oauthbearer.expected.audience'
const ISSUER = 'sasl.oauthbearer.expected.issuer'

/** Kafka 4.4's BrokerJwtValidator.configure checks, with its messages. */
export function checkBrokerJwtValidatorOptions(options: BrokerJwtValidatorOptions): void {
  if (options.expectedAudience.length === 0 && !options.allowUnverifiedAudience) {
    throw new OAuthBearerConfigError(
      `The OAuth validator for the broker requires "${AUDIENCE}" to be configured so that the token's audience ("aud") claim can be verified, but it was not set. Set "${AUDIENCE}" to the audience(s) that identify this cluster, or set "sasl.oauthbearer.allow.unverified.audience" to true to accept tokens regardless of their audience.`,
    )
  }
  if ((options.expectedIssuer ?? '') === '' && !options.allowUnverifiedIssuer) {
    throw new OAuthBearerConfigError(
      `The OAuth validator for the broker requires "${ISSUER}" to be configured so that the token's issuer ("iss") claim can be verified, but it was not set. Set "${ISSUER}" to the issuer URL of the OAuth/OIDC provider that signs the tokens, or set "sasl.oauthbearer.allow.unverified.issuer" to true to accept tokens regardless of their issuer.`,
    )
  }
  if (!Number.isInteger(options.clockSkewSeconds) || options.clockSkewSeconds < 0) throw new OAuthBearerConfigError('sasl.oauthbearer.clock.skew.seconds must be a non-negative integer')
}

/** Kafka's SerializedJwt: three sections, none empty. */
function checkSerialized(jwt: string): string | undefined {
  const token = jwt.trim()
  if (token === '') return 'Malformed JWT provided; expected three sections (header, payload, and signature)'
  const splits = token.split('.')
  if (splits.length !== 3) return 'Malformed JWT provided; expected three sections (header, payload, and signature)'
  for (const [i, section] of ['header', 'payload', 'signature'].entries()) {
    if (splits[i]!.trim() === '') return `Malformed JWT provided; expected at least one character for the ${section}`
  }
  return undefined
}

function stringClaim(name: string, value: unknown): string {
  if (value === undefined || value === null) throw new Error(`${name} value must be non-null`)
  if (typeof value !== 'string') throw new Error(`Could not extract the '${name}' claim from the access token`)
  if (value === '') throw new Error(`${name} value must be non-empty`)
  if (value.trim() === '') throw new Error(`${name} value must not contain only whitespace`)
  return value.trim()
}

/** Kafka's ClaimValidationUtils.validateScopes over the scope claim as Kafka reads it. */
function scopeOf(name: string, raw: unknown): Set<string> {
  const list = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? (raw as unknown[]) : []
  const scope = new Set<string>()
  for (const item of list) {
    const s = stringClaim(name, item)
    if (scope.has(s)) throw new Error(`${name} value must not contain duplicates - ${s} already present`)
    scope.add(s)
  }
  return scope
}

export class BrokerJwtValidator implements OAuthBearerValidator {
  constructor(
    private readonly options: BrokerJwtValidatorOptions,
    private readonly resolver: VerificationKeyResolver,
    private readonly now: () => number = Date.now,
  ) {
    checkBrokerJwtValidatorOptions(options)
  }

  async validate(tokenValue: string): Promise<OAuthBearerValidationResult> {
    const malformed = checkSerialized(tokenValue)
    if (malformed) return invalidToken(malformed)
    const jose = await loadJose()
    let payload: JWTPayload
    try {
      const header = jose.decodeProtectedHeader(tokenValue.trim())
      if (header.alg === 'none') throw new Error("'none' is not a permitted algorithm")
      const { options } = this
      payload = (
        await jose.jwtVerify(tokenValue.trim(), (h, t) => this.resolver.resolveKey(h, t), {
          issuer: options.expectedIssuer ?? undefined,
          audience: options.expectedAudience.length > 0 ? [...options.expectedAudience] : undefined,
          clockTolerance: options.clockSkewSeconds,
          requiredClaims: ['exp', 'iat'],
          currentDate: new Date(this.now()),
        })
      ).payload
      if (payload.exp! < payload.iat!) throw new Error(`The Expiration Time (exp=${payload.exp}) claim value cannot be before the Issued At (iat=${payload.iat}) claim value.`)
    } catch (err) {
      return invalidToken(`Could not validate the access token: ${(err as Error).message}`)
    }
    let token: OAuthBearerToken
    try {
      token = this.tokenOf(payload)
    } catch (err) {
      return invalidToken((err as Error).message)
    }
    const missing = this.options.requiredScope.find((item) => !token.scope.has(item))
    if (missing !== undefined) {
      const required = `[${this.options.requiredScope.join(', ')}]`
      return {
        failure: {
          status: 'insufficient_scope',
          scope: required,
          reason: `The provided scope ([${[...token.scope].join(', ')}]) was missing a required scope (${missing}).  All required scope elements: ${required}`,
        },
      }
    }
    return { token }
  }

  close(): void {
    this.resolver.close()
  }

  private tokenOf(payload: JWTPayload): OAuthBearerToken {
    const { scopeClaimName, subClaimName } = this.options
    const exp = payload.exp!
    const iat = payload.iat!
    if (exp < 0) throw new Error(`exp value must be non-negative; value given was "${exp * 1000}"`)
    if (iat < 0) throw new Error(`iat value must be null or non-negative; value given was "${iat * 1000}"`)
    return {
      principalName: stringClaim(subClaimName, payload[subClaimName]),
      scope: scopeOf(scopeClaimName, payload[scopeClaimName]),
      lifetimeMs: Math.floor(exp) * 1000,
      startTimeMs: Math.floor(iat) * 1000,
    }
  }
}
