/**
 * The broker's side of one SASL exchange (javax.security.sasl.SaslServer as Kafka's
 * SaslServerAuthenticator drives it): one instance per authentication, fed the client's tokens
 * (SaslAuthenticate's authBytes, or the raw frames after SaslHandshake v0) until it is complete.
 * Each mechanism (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER) is a `SaslServerFactory` registered
 * under its name. A mechanism never puts a password or a token in an error message or a log line.
 */
import type { SecurityProtocol } from './security-protocol.js'

export interface SaslServerContext {
  listenerName: string
  securityProtocol: SecurityProtocol
  /** The client's address, as ACLs' host. */
  clientAddress: string
}

export interface SaslServer {
  /** The mechanism's name, e.g. `SCRAM-SHA-512`. */
  readonly mechanism: string
  /**
   * Evaluates the client's next token and resolves to the challenge to send back (empty when
   * there is none). Rejects with SaslAuthenticationError when the credentials are wrong or the
   * token is malformed; the broker then answers SASL_AUTHENTICATION_FAILED with its message.
   */
  evaluateResponse(response: Buffer): Promise<Buffer>
  /** The exchange succeeded: `authorizationId` is known. */
  readonly complete: boolean
  /** The authenticated user's name once complete; the principal is `User:<it>`. */
  authorizationId(): string
  /**
   * When the credential stops being valid (ms since the epoch; an OAUTHBEARER token's `exp`), or
   * undefined. KIP-368 ends the session at the earlier of this and `connections.max.reauth.ms`.
   */
  credentialExpiresAtMs?(): number | undefined
}

export type SaslServerFactory = (context: SaslServerContext) => SaslServer

/** A failed authentication: its message goes to the client; it holds no secret. */
export class SaslAuthenticationError extends Error {
  readonly code = 'SASL_AUTHENTICATION_FAILED'
  constructor(message: string) {
    super(message)
    this.name = 'SaslAuthenticationError'
  }
}
