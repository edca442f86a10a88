/**
 * The broker's side of SASL/OAUTHBEARER (RFC 7628; Kafka's OAuthBearerSaslServer):
 *
 * 1. The client's first message (oauthbearer-client-initial-response.ts) carries the token; a
 *    message that does not parse fails the exchange with Kafka's generic message.
 * 2. The validator checks the token. Valid: the exchange is complete, the principal is
 *    `User:<the token's principal claim>`, the session may last until the token's `exp`
 *    (KIP-368). An `a=` authorization id other than that principal fails the exchange.
 * 3. Refused: the server answers the RFC's JSON error challenge,
 *    `{"status":"invalid_token"}` (with `"scope"` for insufficient_scope); the client's `\x01`
 *    reply then fails the exchange with that JSON as the message, which the client shows.
 *
 * SASL extensions are accepted as Kafka's validators accept them (all valid) and kept.
 * Nothing here logs or throws the token: reasons come from the validator and are checked not to
 * hold it.
 */
import type { Logger } from '../../logger.js'
import { silentLogger } from '../../logger.js'
import { SaslAuthenticationError, type SaslServer, type SaslServerContext, type SaslServerFactory } from '../sasl-server.js'
import { OAuthBearerMessageError, parseClientInitialResponse } from './oauthbearer-client-initial-response.js'
import type { OAuthBearerToken, OAuthBearerValidationFailure, OAuthBearerValidator } from './oauthbearer-token.js'

export const OAUTHBEARER_MECHANISM = 'OAUTHBEARER'

/**
 * What Kafka's SaslServerAuthenticator tells a client whose exchange failed with a plain
 * SaslException (a malformed message): nothing about what was wrong.
 */
export const INVALID_CREDENTIALS_MESSAGE = `Authentication failed during authentication due to invalid credentials with SASL mechanism ${OAUTHBEARER_MECHANISM}`

/** Kafka's OAuthBearerSaslServer.jsonErrorResponse. */
export function jsonErrorResponse(failure: OAuthBearerValidationFailure): string {
  let json = `{"status":"${failure.status}"`
  if (failure.scope !== undefined) json += `, "scope":"${failure.scope}"`
  if (failure.openIdConfiguration !== undefined) json += `, "openid-configuration":"${failure.openIdConfiguration}"`
  return json + '}'
}

/** `reason` unless it holds the token or one of its sections; then a reason that does not. */
function withoutToken(reason: string, tokenValue: string): string {
  const secrets = [tokenValue, ...tokenValue.split('.')].filter((s) => s.length >= 8)
  return secrets.some((s) => reason.includes(s)) ? 'token refused (reason withheld: it quoted the token)' : reason
}

export class OAuthBearerSaslServer implements SaslServer {
  readonly mechanism = OAUTHBEARER_MECHANISM
  private token: OAuthBearerToken | undefined
  private errorMessage: string | undefined
  private extensionMap: ReadonlyMap<string, string> = new Map()

  constructor(
    private readonly validator: OAuthBearerValidator,
    private readonly context: SaslServerContext,
    private readonly logger: Logger = silentLogger,
  ) {}

  get complete(): boolean {
    return this.token !== undefined
  }

  async evaluateResponse(response: Buffer): Promise<Buffer> {
    if (this.complete) throw new SaslAuthenticationError('Authentication exchange has already completed')
    if (response.length === 1 && response[0] === 0x01 && this.errorMessage !== undefined) {
      throw new SaslAuthenticationError(this.errorMessage)
    }
    this.errorMessage = undefined
    let parsed
    try {
      parsed = parseClientInitialResponse(response)
    } catch (err) {
      if (!(err instanceof OAuthBearerMessageError)) throw err
      this.logger.debug('OAUTHBEARER client message refused', { reason: err.message, clientAddress: this.context.clientAddress, listener: this.context.listenerName })
      throw new SaslAuthenticationError(INVALID_CREDENTIALS_MESSAGE)
    }
    const result = await this.validator.validate(parsed.tokenValue)
    if ('failure' in result) {
      this.errorMessage = jsonErrorResponse(result.failure)
      this.logger.debug('OAUTHBEARER token refused', {
        status: result.failure.status,
        reason: withoutToken(result.failure.reason, parsed.tokenValue),
        clientAddress: this.context.clientAddress,
        listener: this.context.listenerName,
      })
      return Buffer.from(this.errorMessage, 'utf8')
    }
    const { token } = result
    if (parsed.authorizationId !== '' && parsed.authorizationId !== token.principalName) {
      throw new SaslAuthenticationError(
        `Authentication failed: Client requested an authorization id (${parsed.authorizationId}) that is different from the token's principal name (${token.principalName})`,
      )
    }
    this.extensionMap = parsed.extensions
    this.token = token
    this.logger.debug('OAUTHBEARER authenticated', { user: token.principalName, clientAddress: this.context.clientAddress })
    return Buffer.alloc(0)
  }

  authorizationId(): string {
    if (!this.token) throw new Error('Authentication exchange has not completed')
    return this.token.principalName
  }

  credentialExpiresAtMs(): number | undefined {
    return this.token?.lifetimeMs
  }

  /** The validated token (Kafka's negotiated property `OAUTHBEARER.token`). */
  validatedToken(): OAuthBearerToken | undefined {
    return this.token
  }

  /** The client's SASL extensions, once complete (Kafka's other negotiated properties). */
  extensions(): ReadonlyMap<string, string> {
    return this.extensionMap
  }
}

/** The OAUTHBEARER mechanism for the SASL registry: one server per authentication, sharing `validator`. */
export function oauthBearerSaslServerFactory(validator: OAuthBearerValidator, logger: Logger = silentLogger): SaslServerFactory {
  return (context) => new OAuthBearerSaslServer(validator, context, logger)
}
