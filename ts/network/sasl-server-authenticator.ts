/**
 * SaslServerAuthenticator (Kafka's class of that name, with the parts of KafkaChannel and the
 * SocketServer's processor that re-authenticate and expire sessions): the SASL authentication of
 * one connection of a SASL_PLAINTEXT or SASL_SSL listener.
 *
 * Until it completes only ApiVersions (once, first) and SaslHandshake are answered; any other
 * request fails the authentication and closes the connection, answering nothing (Kafka's
 * IllegalSaslStateException). SaslHandshake names a mechanism enabled on the listener
 * (`sasl.enabled.mechanisms`), else UNSUPPORTED_SASL_MECHANISM with the enabled ones, and the
 * connection closes. Then the mechanism's tokens go to a SaslServer made by its factory:
 * - after SaslHandshake v1, in SaslAuthenticate requests (any other request closes the connection);
 * - after SaslHandshake v0 (legacy), as raw size-prefixed frames without a Kafka header, answered
 *   likewise (an empty frame when the mechanism has no challenge).
 * Success sets `connection.principal` to `User:<authorizationId>`. Failure answers
 * SASL_AUTHENTICATION_FAILED with the mechanism's message (v1; v0 answers nothing), and closes:
 * both after `connection.failed.authentication.delay.ms`, as Kafka delays them, reading nothing
 * meanwhile. While authenticating, frames may be at most `sasl.server.max.receive.size`.
 *
 * KIP-368: the session lasts the smaller of `connections.max.reauth.ms` (0: unbounded) and the
 * credential's own lifetime (`SaslServer.credentialExpiresAtMs`); SaslAuthenticate v1+ tells the
 * client (sessionLifetimeMs). A SaslHandshake on an authenticated connection whose session has a
 * lifetime starts a re-authentication (at most one a second), with the same mechanism and the same
 * principal, else it fails and the connection closes; the requests of a session past its lifetime
 * close the connection, without an answer, when they reach the broker (Kafka's processor closes
 * an expired channel on its next request). Without a lifetime a SaslHandshake goes to the broker,
 * which answers ILLEGAL_SASL_STATE.
 *
 * Nothing here logs a token, a password, or a mechanism's message beyond what it sends the client.
 */
import type { Logger } from '../logger.js'
import { ApiKey } from '../protocol/apis/api.js'
import { saslAuthenticateCodec, type SaslAuthenticateResponse } from '../protocol/apis/sasl-authenticate.js'
import { saslHandshakeCodec, type SaslHandshakeResponse } from '../protocol/apis/sasl-handshake.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { readRequestHeaderRest, readRequestHeaderStart, writeResponseHeader } from '../protocol/header.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'
import { principalToString, samePrincipal, userPrincipal, type KafkaPrincipal } from '../security/kafka-principal.js'
import { SaslAuthenticationError, type SaslServer, type SaslServerFactory } from '../security/sasl-server.js'
import type { Authenticator, AuthenticatorOutcome, Connection, RequestHandler } from './connection.js'

export interface SaslAuthenticatorOptions {
  /** The mechanisms enabled on the listener (`sasl.enabled.mechanisms`, in order), each with its server factory. */
  mechanisms: ReadonlyMap<string, SaslServerFactory>
  /** sasl.server.max.receive.size: the largest frame while authenticating (Kafka's 524288). */
  maxReceiveBytes: number
  /** connection.failed.authentication.delay.ms (Kafka's 100). */
  failedAuthenticationDelayMs: number
  /** connections.max.reauth.ms of a mechanism on this listener; 0: sessions do not expire. */
  connectionsMaxReauthMs(mechanism: string): number
  logger: Logger
  /** The clock (ms), for tests; default Date.now. */
  now?: () => number
}

/** Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS. */
const MIN_REAUTH_INTERVAL_MS = 1000

type State =
  /** The first request: ApiVersions or SaslHandshake. */
  | 'HANDSHAKE_OR_VERSIONS_REQUEST'
  | 'HANDSHAKE_REQUEST'
  /** SaslAuthenticate requests (handshake v1) or raw tokens (v0). */
  | 'AUTHENTICATE'
  /** A re-authentication asked for another mechanism: the next frame fails it. */
  | 'REAUTH_BAD_MECHANISM'
  | 'COMPLETE'

/** Unexpected in the exchange (Kafka's IllegalSaslStateException and friends): close, answering `response` if any. */
class AuthenticationFailure extends Error {
  constructor(
    message: string,
    readonly response: Buffer | null = null,
    /** Closed at once (Kafka's non-authentication faults), not after the failed-authentication delay. */
    readonly immediate = false,
  ) {
    super(message)
  }
}

const API_NAMES = new Map<number, string>(Object.entries(ApiKey).map(([name, key]) => [key, name]))

export class SaslServerAuthenticator implements Authenticator {
  readonly maxReceiveBytes: number
  private state: State = 'HANDSHAKE_OR_VERSIONS_REQUEST'
  private saslServer: SaslServer | null = null
  private mechanism: string | null = null
  /** The handshake was v0: tokens are raw frames. */
  private legacy = false
  /** Re-authenticating: the mechanism and principal of the session being renewed. */
  private previous: { mechanism: string; principal: KafkaPrincipal } | null = null
  private sessionExpiresAtMs: number | undefined
  private lastReauthStartMs = 0
  private readonly now: () => number

  constructor(private readonly options: SaslAuthenticatorOptions) {
    if (options.mechanisms.size === 0) throw new Error('No SASL mechanisms are enabled')
    this.maxReceiveBytes = options.maxReceiveBytes
    this.now = options.now ?? Date.now
  }

  get authenticating(): boolean {
    return this.state !== 'COMPLETE'
  }

  /** The session's end (ms since the epoch), or undefined when it does not expire. */
  get sessionExpiresAt(): number | undefined {
    return this.sessionExpiresAtMs
  }

  async invalidReceive(): Promise<void> {
    this.state = 'HANDSHAKE_REQUEST'
    await this.delay()
  }

  async handle(frame: Buffer, connection: Connection, next: RequestHandler): Promise<AuthenticatorOutcome> {
    if (this.state === 'COMPLETE') return this.authenticated(frame, connection, next)
    try {
      return await this.authenticate(frame, connection, next)
    } catch (err) {
      if (!(err instanceof AuthenticationFailure)) throw err
      this.options.logger.info(this.previous ? 'failed re-authentication' : 'failed authentication', {
        connection: connection.id,
        clientAddress: connection.clientAddress,
        listener: connection.listenerName,
        mechanism: this.mechanism,
        reason: err.message,
      })
      if (!err.immediate) await this.delay()
      return { response: err.response, close: `SASL ${this.previous ? 're-' : ''}authentication failed` }
    }
  }

  private delay(): Promise<void> {
    const ms = this.options.failedAuthenticationDelayMs
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()
  }

  /** A request of an authenticated connection: a re-authentication, an expired session, or the broker's. */
  private async authenticated(frame: Buffer, connection: Connection, next: RequestHandler): Promise<AuthenticatorOutcome> {
    const apiKey = frame.length >= 2 ? frame.readInt16BE(0) : -1
    const now = this.now()
    if (apiKey === ApiKey.SaslHandshake && this.sessionExpiresAtMs !== undefined && (this.lastReauthStartMs === 0 || now - this.lastReauthStartMs >= MIN_REAUTH_INTERVAL_MS)) {
      this.lastReauthStartMs = now
      this.previous = { mechanism: this.mechanism!, principal: connection.principal }
      this.state = 'HANDSHAKE_REQUEST'
      this.options.logger.debug('beginning re-authentication', { connection: connection.id })
      return this.handle(frame, connection, next)
    }
    if (this.sessionExpiresAtMs !== undefined && now > this.sessionExpiresAtMs) {
      this.options.logger.info('closing connection: SASL session expired', { connection: connection.id, principal: principalToString(connection.principal) })
      connection.close('SASL session expired (connections.max.reauth.ms)')
      return { response: null }
    }
    return { response: await next(frame, connection) }
  }

  private async authenticate(frame: Buffer, connection: Connection, next: RequestHandler): Promise<AuthenticatorOutcome> {
    if (this.state === 'REAUTH_BAD_MECHANISM') {
      throw new AuthenticationFailure(`SASL mechanism requested by client is not supported for re-authentication of mechanism '${this.previous!.mechanism}'`)
    }
    if (this.state === 'AUTHENTICATE' && this.legacy) return this.legacyToken(frame, connection)
    const r = new Reader(frame)
    let header: ReturnType<typeof readRequestHeaderStart>
    try {
      header = readRequestHeaderStart(r)
    } catch {
      // Kafka's 0.9 GSSAPI fallback: a first packet that is not a request is a GSSAPI token.
      throw new AuthenticationFailure('first SASL packet is not a Kafka request, and GSSAPI is not supported by server')
    }
    const { apiKey, apiVersion, correlationId } = header
    const name = API_NAMES.get(apiKey) ?? `ApiKey ${apiKey}`
    if (this.state === 'AUTHENTICATE') {
      if (apiKey !== ApiKey.SaslAuthenticate) throw new AuthenticationFailure(`Unexpected Kafka request of type ${name} during SASL authentication.`)
      return this.saslAuthenticate(r, apiVersion, correlationId, connection)
    }
    if (apiKey === ApiKey.ApiVersions) {
      if (this.state !== 'HANDSHAKE_OR_VERSIONS_REQUEST') throw new AuthenticationFailure(`Unexpected ApiVersions request received during SASL authentication state ${this.state}`, null, true)
      const response = await next(frame, connection)
      // An answer with an error (an unsupported version) lets the client ask again.
      if (Buffer.isBuffer(response) && response.length >= 6 && response.readInt16BE(4) === ErrorCode.NONE) this.state = 'HANDSHAKE_REQUEST'
      return { response }
    }
    if (apiKey !== ApiKey.SaslHandshake) throw new AuthenticationFailure(`Unexpected Kafka request of type ${name} during SASL handshake.`)
    return this.saslHandshake(r, apiVersion, correlationId, connection)
  }

  private decode<T>(what: () => T, name: string): T {
    try {
      return what()
    } catch (err) {
      throw new AuthenticationFailure(`malformed ${name} request: ${(err as Error).message}`, null, true)
    }
  }

  private saslHandshake(r: Reader, version: number, correlationId: number, connection: Connection): AuthenticatorOutcome {
    const request = this.decode(() => {
      readRequestHeaderRest(r, false)
      return saslHandshakeCodec.decodeRequest(r, version)
    }, 'SaslHandshake')
    const enabled = [...this.options.mechanisms.keys()]
    const factory = this.options.mechanisms.get(request.mechanism)
    if (!factory) {
      const refusal = encode((w) => saslHandshakeCodec.encodeResponse(w, version, { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: enabled }), correlationId, false)
      throw new AuthenticationFailure(`Unsupported SASL mechanism ${request.mechanism}`, refusal)
    }
    const answer: SaslHandshakeResponse = { errorCode: ErrorCode.NONE, mechanisms: enabled }
    const response = encode((w) => saslHandshakeCodec.encodeResponse(w, version, answer), correlationId, false)
    if (this.previous && request.mechanism !== this.previous.mechanism) {
      this.state = 'REAUTH_BAD_MECHANISM'
      return { response }
    }
    this.mechanism = request.mechanism
    this.legacy = version === 0
    this.saslServer = factory({ listenerName: connection.listenerName, securityProtocol: connection.securityProtocol, clientAddress: connection.clientAddress })
    this.state = 'AUTHENTICATE'
    return { response }
  }

  private async saslAuthenticate(r: Reader, version: number, correlationId: number, connection: Connection): Promise<AuthenticatorOutcome> {
    const flexible = version >= saslAuthenticateCodec.flexibleFrom
    const request = this.decode(() => {
      readRequestHeaderRest(r, flexible)
      return saslAuthenticateCodec.decodeRequest(r, version)
    }, 'SaslAuthenticate')
    const respond = (response: SaslAuthenticateResponse): Buffer => encode((w) => saslAuthenticateCodec.encodeResponse(w, version, response), correlationId, flexible)
    try {
      const challenge = await this.saslServer!.evaluateResponse(request.authBytes)
      const sessionLifetimeMs = this.saslServer!.complete ? this.completed(connection) : 0
      return { response: respond({ errorCode: ErrorCode.NONE, errorMessage: '', authBytes: challenge, sessionLifetimeMs: BigInt(sessionLifetimeMs) }) }
    } catch (err) {
      const message = this.failureMessage(err)
      throw new AuthenticationFailure(message, respond({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n }))
    }
  }

  /** A raw token after SaslHandshake v0: the answer is the raw challenge; a failure answers nothing. */
  private async legacyToken(token: Buffer, connection: Connection): Promise<AuthenticatorOutcome> {
    try {
      const challenge = await this.saslServer!.evaluateResponse(token)
      if (this.saslServer!.complete) this.completed(connection)
      return { response: challenge }
    } catch (err) {
      throw new AuthenticationFailure(this.failureMessage(err))
    }
  }

  /** The client's message for a failed evaluation: the mechanism's own, or Kafka's for anything else (which may hold what must not leak). */
  private failureMessage(err: unknown): string {
    if (err instanceof AuthenticationFailure) return err.message
    if (err instanceof SaslAuthenticationError) return err.message
    return `Authentication failed during ${this.previous ? 're-authentication' : 'authentication'} due to invalid credentials with SASL mechanism ${this.mechanism}`
  }

  /**
   * The exchange is complete: the principal (the same one when re-authenticating), the session's
   * end; returns the session lifetime for the client (0: none).
   */
  private completed(connection: Connection): number {
    const principal = userPrincipal(this.saslServer!.authorizationId())
    if (this.previous && !samePrincipal(this.previous.principal, principal)) {
      const from = this.previous.principal
      throw new AuthenticationFailure(`Cannot change principals during re-authentication from ${from.principalType}.${from.name}: ${principal.principalType}.${principal.name}`)
    }
    const now = this.now()
    const maxReauthMs = this.options.connectionsMaxReauthMs(this.mechanism!)
    const credentialExpiresAtMs = this.saslServer!.credentialExpiresAtMs?.()
    let lifetimeMs = 0
    this.sessionExpiresAtMs = undefined
    if (credentialExpiresAtMs !== undefined || maxReauthMs > 0) {
      const byCredential = credentialExpiresAtMs === undefined ? Number.POSITIVE_INFINITY : credentialExpiresAtMs - now
      const byConfig = maxReauthMs > 0 ? maxReauthMs : Number.POSITIVE_INFINITY
      lifetimeMs = Math.max(0, Math.min(byCredential, byConfig))
      this.sessionExpiresAtMs = now + lifetimeMs
    }
    connection.principal = principal
    this.options.logger.debug(this.previous ? 're-authenticated' : 'authenticated', {
      connection: connection.id,
      principal: principalToString(principal),
      mechanism: this.mechanism,
      sessionLifetimeMs: lifetimeMs,
    })
    this.previous = null
    this.state = 'COMPLETE'
    return lifetimeMs
  }
}

/** A response frame: header v0 (or v1 when flexible) and the body `write` writes. */
function encode(write: (w: Writer) => void, correlationId: number, flexible: boolean): Buffer {
  const w = new Writer()
  writeResponseHeader(w, correlationId, flexible)
  write(w)
  return w.finish()
}
