/**
 * Authenticates a connection with SASL, as Kafka's SaslClientAuthenticator (KIP-152, KIP-368):
 * after ApiVersions, a SaslHandshake v1 names the mechanism (UNSUPPORTED_SASL_MECHANISM lists the
 * broker's), then SaslAuthenticate requests carry the mechanism's messages and their responses the
 * server's challenges (sasl-client.ts) until the mechanism completes. A response's error
 * (SASL_AUTHENTICATION_FAILED with the broker's message, which names no secret) or a challenge the
 * mechanism refuses fails the authentication with a KafkaClientError of that code, not retriable:
 * the caller closes the connection.
 *
 * SaslAuthenticate v1+ answers the session's lifetime (the broker's connections.max.reauth.ms, or
 * a token's expiry): 0 means none. Before it ends the caller authenticates again over the same
 * connection (network-client.ts), with no other request in between (`exclusive`).
 *
 * Handshake v0 (raw GSSAPI tokens, no SaslAuthenticate) is not spoken: every Kafka from 1.0
 * serves v1.
 */
import { servedCodec } from '../../protocol/apis/api.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { saslAuthenticateRequestCodec } from '../../protocol/messages/sasl-authenticate-request.js'
import { saslAuthenticateResponseCodec } from '../../protocol/messages/sasl-authenticate-response.js'
import { saslHandshakeRequestCodec } from '../../protocol/messages/sasl-handshake-request.js'
import { saslHandshakeResponseCodec } from '../../protocol/messages/sasl-handshake-response.js'
import type { ClientSaslOptions } from '../client-security.js'
import type { KafkaConnection } from '../connection.js'
import { KafkaClientError } from '../errors.js'
import type { NodeApiVersions } from '../node-api-versions.js'
import { OAuthBearerSaslClient } from './oauth-bearer-sasl-client.js'
import { PlainSaslClient } from './plain-sasl-client.js'
import { SaslClientError, type SaslClient } from './sasl-client.js'
import { ScramSaslClient } from './scram-sasl-client.js'

/** The client's codecs: SaslHandshake v1 only, SaslAuthenticate v0-2. */
export const saslHandshakeClientCodec = servedCodec(saslHandshakeRequestCodec, saslHandshakeResponseCodec, 1, 1)
export const saslAuthenticateClientCodec = servedCodec(saslAuthenticateRequestCodec, saslAuthenticateResponseCodec, 0, 2)

/** The most SaslAuthenticate round trips one exchange may take (SCRAM takes 2). */
const MAX_ROUNDS = 5

export interface SaslSession {
  /** The broker's session lifetime in ms (0: none, no re-authentication needed). */
  sessionLifetimeMs: number
}

export function createSaslClient(options: ClientSaslOptions): SaslClient {
  switch (options.mechanism) {
    case 'PLAIN':
      return new PlainSaslClient(options.username!, options.password!)
    case 'SCRAM-SHA-256':
    case 'SCRAM-SHA-512':
      return new ScramSaslClient(options.mechanism, options.username!, options.password!)
    case 'OAUTHBEARER':
      return new OAuthBearerSaslClient(options.oauthBearerProvider!)
  }
}

/**
 * Runs one SASL exchange on `connection` (ApiVersions done: `versions`). `exclusive` marks its
 * requests for a re-authentication, during which the connection holds back every other.
 */
export async function authenticate(connection: KafkaConnection, versions: NodeApiVersions, options: ClientSaslOptions, send: { timeoutMs: number; exclusive?: boolean }): Promise<SaslSession> {
  const what = `SASL ${options.mechanism} authentication to ${connection.address}`
  const handshakeVersion = versions.latestUsableVersion(saslHandshakeClientCodec)
  const handshake = await connection.send(saslHandshakeClientCodec, handshakeVersion, { mechanism: options.mechanism }, send)
  if (handshake.errorCode === ErrorCode.UNSUPPORTED_SASL_MECHANISM) {
    throw new KafkaClientError('UNSUPPORTED_SASL_MECHANISM', `${what}: the broker does not enable ${options.mechanism} on this listener (it enables ${handshake.mechanisms.join(', ') || 'none'})`)
  }
  if (handshake.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(handshake.errorCode, `${what}: SaslHandshake`)
  const version = versions.latestUsableVersion(saslAuthenticateClientCodec)
  const client = createSaslClient(options)
  try {
    let message: Buffer | null = await client.initialResponse()
    let sessionLifetimeMs = 0
    for (let round = 0; message !== null; round++) {
      if (round === MAX_ROUNDS) throw new SaslClientError(`no end after ${MAX_ROUNDS} rounds`)
      const res = await connection.send(saslAuthenticateClientCodec, version, { authBytes: message }, send)
      if (res.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(res.errorCode, what, res.errorMessage)
      sessionLifetimeMs = Number(res.sessionLifetimeMs)
      message = await client.evaluateChallenge(res.authBytes)
    }
    if (!client.complete) throw new SaslClientError('the broker ended the exchange early')
    return { sessionLifetimeMs }
  } catch (err) {
    if (err instanceof SaslClientError) throw new KafkaClientError('SASL_AUTHENTICATION_FAILED', `${what}: ${err.message}`, { cause: err })
    throw err
  }
}
