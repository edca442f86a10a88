/**
 * The client side of one SASL mechanism (Kafka's javax.security.sasl.SaslClient as its
 * SaslClientAuthenticator drives it): the first message, then an answer to each server
 * challenge until the exchange is complete. Each SaslAuthenticate request carries one message,
 * each response one challenge (sasl-authenticator.ts).
 *
 * Mechanisms: PLAIN (plain-sasl-client.ts), SCRAM-SHA-256 and SCRAM-SHA-512
 * (scram-sasl-client.ts), OAUTHBEARER (oauth-bearer-sasl-client.ts). No message or error a
 * mechanism makes holds a password or a token.
 */
export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const

export type SaslMechanism = (typeof SASL_MECHANISMS)[number]

export function isSaslMechanism(name: string): name is SaslMechanism {
  return (SASL_MECHANISMS as readonly string[]).includes(name)
}

export interface SaslClient {
  readonly mechanism: SaslMechanism
  /** The first message (sent with no challenge before it). */
  initialResponse(): Promise<Buffer>
  /**
   * The answer to the server's challenge, or null when there is nothing more to send (the
   * exchange is complete once the server accepted). Throws a SaslClientError when the challenge
   * is malformed or fails the mechanism's checks (SCRAM's server signature).
   */
  evaluateChallenge(challenge: Buffer): Promise<Buffer | null>
  /** Whether the exchange reached its end on this side. */
  readonly complete: boolean
}

/** A challenge this side refuses (Kafka's SaslException in the client). */
export class SaslClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SaslClientError'
  }
}
