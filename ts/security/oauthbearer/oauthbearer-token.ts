/**
 * A validated bearer token (Kafka's OAuthBearerToken) and the validator contract the
 * OAUTHBEARER server calls (Kafka's OAuthBearerValidatorCallback, answered by a callback
 * handler: the unsecured one for tests, the JWKS one for production).
 *
 * The token's compact serialization is a credential: it is not kept here, and no reason, log line
 * or error message built from a validation holds it.
 */

export interface OAuthBearerToken {
  /** The principal's name: the `sub` claim, or the configured principal claim. */
  readonly principalName: string
  /** The scope claim's values. */
  readonly scope: ReadonlySet<string>
  /** When the token expires: its `exp`, in ms since the epoch. */
  readonly lifetimeMs: number
  /** When it was issued (`iat`, ms since the epoch), when it says. */
  readonly startTimeMs: number | undefined
}

/**
 * A token refused (RFC 7628 section 3.2.2): `status` is the error the server's JSON challenge
 * carries (`invalid_token`, `insufficient_scope`), `scope` the scope it lacks; `reason` says why
 * for the broker's log.
 */
export interface OAuthBearerValidationFailure {
  readonly status: 'invalid_token' | 'insufficient_scope'
  readonly scope?: string
  readonly openIdConfiguration?: string
  readonly reason: string
}

export type OAuthBearerValidationResult = { readonly token: OAuthBearerToken } | { readonly failure: OAuthBearerValidationFailure }

/** Validates a client's token (Kafka: an AuthenticateCallbackHandler of OAuthBearerValidatorCallback). */
export interface OAuthBearerValidator {
  validate(tokenValue: string): Promise<OAuthBearerValidationResult>
  /** Stops background work (JWKS refreshes). */
  close(): void
}

/** A configuration the validators cannot use (Kafka's OAuthBearerConfigException / ConfigException). */
export class OAuthBearerConfigError extends Error {
  readonly code = 'INVALID_CONFIG' as const
  constructor(message: string) {
    super(message)
    this.name = 'OAuthBearerConfigError'
  }
}

export function invalidToken(reason: string): { failure: OAuthBearerValidationFailure } {
  return { failure: { status: 'invalid_token', reason } }
}
