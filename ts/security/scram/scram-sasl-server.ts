/**
 * ScramSaslServer (Kafka's class of that name): the broker's side of SCRAM-SHA-256 and
 * SCRAM-SHA-512 (RFC 5802, RFC 7677), two round trips:
 *
 *   client-first  -> server-first  the client's nonce with a random one appended, the user's
 *                                  salt and iteration count
 *   client-final  -> server-final  the client's proof verified against StoredKey; the answer
 *                                  carries the ServerSignature, proving the broker knew ServerKey
 *
 * As Kafka's: only the gs2 header `n` (no channel binding); an authorization id, if given, must
 * be the user; the `tokenauth` extension (delegation tokens) is refused, since this broker has no
 * delegation tokens; a credential with fewer iterations than the mechanism's minimum is refused.
 * Credentials come from a ScramCredentialLookup (credential-cache.ts); the broker never sees the
 * password.
 *
 * Failures are SaslAuthenticationError. As Kafka's SaslServerAuthenticator does for a
 * SaslException, an unknown user, a wrong proof and a malformed message all answer the same
 * message, so a client cannot tell a user that exists from one that does not; only the refusals
 * that depend on nothing secret (an authorization id not the user's, delegation tokens) say why.
 */
import { timingSafeEqual } from 'node:crypto'
import { SaslAuthenticationError, type SaslServer, type SaslServerContext, type SaslServerFactory } from '../sasl-server.js'
import type { ScramCredentialLookup } from './credential-cache.js'
import type { ScramCredential } from './scram-credential.js'
import { authMessage, ScramFormatter, secureRandomNonce, username as usernameOf } from './scram-formatter.js'
import { formatServerFinalMessage, formatServerFirstMessage, parseClientFinalMessage, parseClientFirstMessage, type ClientFirstMessage } from './scram-messages.js'
import type { ScramMechanism } from './scram-mechanism.js'

/** Kafka's ScramLoginModule.TOKEN_AUTH_CONFIG: the extension asking for delegation-token authentication. */
export const TOKEN_AUTH_EXTENSION = 'tokenauth'

export interface ScramSaslServerOptions {
  /** The server's part of the nonce; default a random one. Tests give RFC vectors' fixed nonces. */
  serverNonce?: () => string
}

type State = 'RECEIVE_CLIENT_FIRST_MESSAGE' | 'RECEIVE_CLIENT_FINAL_MESSAGE' | 'COMPLETE' | 'FAILED'

export class ScramSaslServer implements SaslServer {
  readonly mechanism: string
  private readonly scram: Pick<ScramMechanism, 'mechanismName' | 'hashAlgorithm' | 'hashLength' | 'minIterations'>
  private readonly formatter: ScramFormatter
  private readonly credentials: ScramCredentialLookup
  private readonly serverNonce: () => string
  private state: State = 'RECEIVE_CLIENT_FIRST_MESSAGE'
  private authzId: string | undefined
  // Held between the two messages only; cleared on completion or failure.
  private credential: ScramCredential | undefined
  private clientFirst: ClientFirstMessage | undefined
  private serverFirst: { message: string; nonce: string } | undefined

  constructor(mechanism: Pick<ScramMechanism, 'mechanismName' | 'hashAlgorithm' | 'hashLength' | 'minIterations'>, credentials: ScramCredentialLookup, options: ScramSaslServerOptions = {}) {
    this.mechanism = mechanism.mechanismName
    this.scram = mechanism
    this.formatter = new ScramFormatter(mechanism)
    this.credentials = credentials
    this.serverNonce = options.serverNonce ?? secureRandomNonce
  }

  get complete(): boolean {
    return this.state === 'COMPLETE'
  }

  authorizationId(): string {
    if (this.state !== 'COMPLETE' || this.authzId === undefined) throw new Error('SCRAM authentication exchange has not completed')
    return this.authzId
  }

  async evaluateResponse(response: Buffer): Promise<Buffer> {
    try {
      switch (this.state) {
        case 'RECEIVE_CLIENT_FIRST_MESSAGE':
          return this.receiveClientFirst(response)
        case 'RECEIVE_CLIENT_FINAL_MESSAGE':
          return this.receiveClientFinal(response)
        default:
          throw new SaslAuthenticationError(`Unexpected SASL/${this.mechanism} message in state ${this.state}`)
      }
    } catch (err) {
      this.clear()
      this.state = 'FAILED'
      throw err instanceof SaslAuthenticationError ? err : this.invalidCredentials()
    }
  }

  private receiveClientFirst(response: Buffer): Buffer {
    const clientFirst = parseClientFirstMessage(response)
    if (clientFirst.extensions.get(TOKEN_AUTH_EXTENSION)?.toLowerCase() === 'true') {
      throw new SaslAuthenticationError(`Authentication failed: delegation token authentication (${TOKEN_AUTH_EXTENSION}) is not supported by this broker`)
    }
    const username = usernameOf(clientFirst.saslName)
    if (username === undefined) throw this.invalidCredentials()
    const credential = this.credentials.scramCredential(this.mechanism, username)
    if (!credential || credential.iterations < this.scram.minIterations) throw this.invalidCredentials()
    if (clientFirst.authorizationId !== '' && usernameOf(clientFirst.authorizationId) !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username')
    }
    const nonce = clientFirst.nonce + this.serverNonce()
    const message = formatServerFirstMessage(nonce, credential.salt, credential.iterations)
    this.clientFirst = clientFirst
    this.serverFirst = { message, nonce }
    this.credential = credential
    this.authzId = username
    this.state = 'RECEIVE_CLIENT_FINAL_MESSAGE'
    return Buffer.from(message, 'utf8')
  }

  private receiveClientFinal(response: Buffer): Buffer {
    const clientFirst = this.clientFirst!
    const serverFirst = this.serverFirst!
    const credential = this.credential!
    const clientFinal = parseClientFinalMessage(response)
    if (clientFinal.nonce !== serverFirst.nonce) throw this.invalidCredentials()
    // c= is the gs2 header itself (no channel-binding data follows header "n").
    if (!clientFinal.channelBinding.equals(Buffer.from(clientFirst.gs2Header, 'utf8'))) throw this.invalidCredentials()
    if (clientFinal.proof.length !== this.scram.hashLength) throw this.invalidCredentials()
    const auth = authMessage(clientFirst.clientFirstMessageBare, serverFirst.message, clientFinal.clientFinalMessageWithoutProof)
    const clientSignature = this.formatter.clientSignature(credential.storedKey, auth)
    const computedStoredKey = this.formatter.storedKeyFromProof(clientSignature, clientFinal.proof)
    if (computedStoredKey.length !== credential.storedKey.length || !timingSafeEqual(computedStoredKey, credential.storedKey)) throw this.invalidCredentials()
    const serverFinal = formatServerFinalMessage(this.formatter.serverSignature(credential.serverKey, auth))
    this.clear()
    this.state = 'COMPLETE'
    return Buffer.from(serverFinal, 'utf8')
  }

  /** Kafka's answer to any SaslException: says nothing of why. */
  private invalidCredentials(): SaslAuthenticationError {
    return new SaslAuthenticationError(`Authentication failed during authentication due to invalid credentials with SASL mechanism ${this.mechanism}`)
  }

  private clear(): void {
    this.credential = undefined
    this.clientFirst = undefined
    this.serverFirst = undefined
  }
}

/** The SaslServerFactory of one SCRAM mechanism, for the broker's mechanism registry. */
export function scramSaslServerFactory(mechanism: ScramMechanism, credentials: ScramCredentialLookup, options: ScramSaslServerOptions = {}): SaslServerFactory {
  return (_context: SaslServerContext) => new ScramSaslServer(mechanism, credentials, options)
}
