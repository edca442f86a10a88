/**
 * Kafka's OAuthBearerUnsecuredValidatorCallbackHandler, the broker's default OAUTHBEARER
 * validator: it accepts unsecured JWSs (`alg: none`, see oauthbearer-unsecured-jws.ts) and checks
 * their claims, never a signature. For tests and development only. Its options are the JAAS
 * options of the listener's OAuthBearerLoginModule entry:
 *
 *   unsecuredValidatorPrincipalClaimName   the principal's claim (default `sub`)
 *   unsecuredValidatorScopeClaimName       the scope's claim (default `scope`)
 *   unsecuredValidatorRequiredScope        space-separated scope the token must hold
 *   unsecuredValidatorAllowableClockSkewMs clock skew allowed on `iat` and `exp` (default 0)
 *
 * Checks, in Kafka's order: the principal claim is present; `iat`, when present, is not after now
 * plus the skew; now minus the skew is before `exp`; `exp` is after `iat`; every required scope
 * item is in the token's scope (else `insufficient_scope`).
 */
import { OAuthBearerIllegalTokenError, OAuthBearerUnsecuredJws } from './oauthbearer-unsecured-jws.js'
import { OAuthBearerConfigError, type OAuthBearerValidationResult, type OAuthBearerValidator } from './oauthbearer-token.js'

export interface UnsecuredValidatorOptions {
  principalClaimName: string
  scopeClaimName: string
  requiredScope: readonly string[]
  allowableClockSkewMs: number
}

const OPTION_PREFIX = 'unsecuredValidator'
// Kafka's OAuthBearerScopeUtils: a scope item is printable ASCII but space, '"' and '\'.
const SCOPE_ITEM = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/** Kafka's OAuthBearerScopeUtils.parseScope: space-separated items, each checked. */
export function parseScope(spaceDelimited: string): string[] {
  const items = spaceDelimited.split(' ').filter((s) => s !== '')
  for (const item of items) if (!SCOPE_ITEM.test(item)) throw new OAuthBearerConfigError(`Invalid scope value: ${item}`)
  return items
}

/** The validator's options from the JAAS options of its OAuthBearerLoginModule entry. */
export function unsecuredValidatorOptions(jaasOptions: Readonly<Record<string, string>>): UnsecuredValidatorOptions {
  const option = (name: string) => jaasOptions[OPTION_PREFIX + name]?.trim() ?? ''
  const skewText = option('AllowableClockSkewMs')
  const skew = skewText === '' ? 0 : Number(skewText)
  if (!Number.isSafeInteger(skew) || skew > 2 ** 31 - 1) throw new OAuthBearerConfigError(`${OPTION_PREFIX}AllowableClockSkewMs must be an integer, not "${skewText}"`)
  if (skew < 0) throw new OAuthBearerConfigError(`Allowable clock skew millis must not be negative: ${skewText}`)
  return {
    principalClaimName: option('PrincipalClaimName') || 'sub',
    scopeClaimName: option('ScopeClaimName') || 'scope',
    requiredScope: option('RequiredScope') === '' ? [] : parseScope(option('RequiredScope')),
    allowableClockSkewMs: skew,
  }
}

/** Java's %f: six decimals. */
const f = (n: number) => n.toFixed(6)

export class OAuthBearerUnsecuredValidator implements OAuthBearerValidator {
  constructor(
    private readonly options: UnsecuredValidatorOptions,
    private readonly now: () => number = Date.now,
  ) {}

  async validate(tokenValue: string): Promise<OAuthBearerValidationResult> {
    try {
      return { token: this.check(tokenValue) }
    } catch (err) {
      if (!(err instanceof OAuthBearerIllegalTokenError)) throw err
      return {
        failure: err.failureScope !== undefined ? { status: 'insufficient_scope', scope: err.failureScope, reason: err.reason } : { status: 'invalid_token', reason: err.reason },
      }
    }
  }

  close(): void {}

  private check(tokenValue: string): OAuthBearerUnsecuredJws {
    const { principalClaimName, scopeClaimName, requiredScope, allowableClockSkewMs: skew } = this.options
    const jws = new OAuthBearerUnsecuredJws(tokenValue, principalClaimName, scopeClaimName)
    const now = this.now()
    const iat = jws.claim('iat', 'Number') as number | undefined
    if (iat !== undefined && 1000 * iat > now + skew) {
      throw new OAuthBearerIllegalTokenError(`The Issued At value (${f(iat)} seconds) was after the indicated time (${now} ms) plus allowable clock skew (${skew} ms)`)
    }
    const exp = jws.claim('exp', 'Number') as number
    if (now - skew >= 1000 * exp) {
      throw new OAuthBearerIllegalTokenError(`The indicated time (${now} ms) minus allowable clock skew (${skew} ms) was on or after the Expiration Time value (${f(exp)} seconds)`)
    }
    if (iat !== undefined && exp <= iat) throw new OAuthBearerIllegalTokenError(`The Expiration Time time (${f(exp)} seconds) was not after the Issued At time (${f(iat)} seconds)`)
    for (const item of requiredScope) {
      if (!jws.scope.has(item)) {
        throw new OAuthBearerIllegalTokenError(
          `The provided scope ([${[...jws.scope].join(', ')}]) was missing a required scope (${item}).  All required scope elements: [${requiredScope.join(', ')}]`,
          `[${requiredScope.join(', ')}]`,
        )
      }
    }
    return jws
  }
}
