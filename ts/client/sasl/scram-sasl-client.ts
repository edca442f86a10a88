/**
 * SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), client side, as Kafka's ScramSaslClient:
 *
 *   client-first   n,,n=<user>,r=<client nonce>          (no channel binding: gs2 header "n,,")
 *   server-first   r=<client nonce + server nonce>,s=<salt, base64>,i=<iterations>
 *   client-final   c=biws,r=<nonce>,p=<ClientProof, base64>
 *   server-final   v=<ServerSignature, base64>  or  e=<error>
 *
 *   SaltedPassword  = PBKDF2(HMAC-H, password (UTF-8), salt, iterations)
 *   ClientKey       = HMAC(SaltedPassword, "Client Key");  StoredKey = H(ClientKey)
 *   AuthMessage     = client-first-bare "," server-first "," client-final-without-proof
 *   ClientProof     = ClientKey XOR HMAC(StoredKey, AuthMessage)
 *   ServerSignature = HMAC(HMAC(SaltedPassword, "Server Key"), AuthMessage)
 *
 * The user name is escaped as RFC 5802 says ("=" as "=3D", "," as "=2C"); the password is
 * not SASLprep'd, as Kafka's formatter does not either (so the same bytes hash on both sides).
 * The server's nonce must extend ours, its iteration count be within the mechanism's bounds
 * (4096-16384: Kafka's minimum, and a cap so that a hostile server cannot make us spin) and its
 * signature match ours (compared in constant time): otherwise the exchange fails. The messages
 * and the math are the broker's own (ts/security/scram: ScramFormatter, ScramMessages,
 * ScramMechanism), so both sides compute SCRAM with one implementation; PBKDF2 runs off the
 * event loop here.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { authMessage, saslName, ScramFormatter } from '../../security/scram/scram-formatter.js'
import { SCRAM_SHA_256, scramMechanismForName, type ScramMechanism } from '../../security/scram/scram-mechanism.js'
import {
  formatClientFinalMessage,
  formatClientFinalMessageWithoutProof,
  formatClientFirstMessage,
  parseServerFinalMessage,
  parseServerFirstMessage,
  ScramMessageError,
} from '../../security/scram/scram-messages.js'
import { SaslClientError, type SaslClient } from './sasl-client.js'

/** Kafka's ScramMechanism.minIterations. */
export const SCRAM_MIN_ITERATIONS = SCRAM_SHA_256.minIterations
/** Refused above this: a malicious server could make the client spin (Kafka's max is 16384). */
export const SCRAM_MAX_ITERATIONS = SCRAM_SHA_256.maxIterations

type ScramMechanismName = 'SCRAM-SHA-256' | 'SCRAM-SHA-512'

/** RFC 5802's saslname: "=" and "," escaped. */
export const scramSaslName = saslName

/** A server message that does not parse, as the client's error (its text names what is wrong, never the bytes). */
function parsed<T>(parse: () => T): T {
  try {
    return parse()
  } catch (err) {
    if (err instanceof ScramMessageError) throw new SaslClientError(`SCRAM: ${err.message}`)
    throw err
  }
}

type State = 'initial' | 'first-sent' | 'final-sent' | 'complete'

export class ScramSaslClient implements SaslClient {
  readonly mechanism: ScramMechanismName
  private readonly formatter: ScramFormatter
  private readonly scram: ScramMechanism
  private readonly username: string
  private readonly password: string
  private readonly clientNonce: string
  private state: State = 'initial'
  private clientFirstBare = ''
  private expectedServerSignature: Buffer | null = null

  constructor(mechanism: ScramMechanismName, username: string, password: string, clientNonce = randomBytes(24).toString('base64url')) {
    this.mechanism = mechanism
    this.scram = scramMechanismForName(mechanism)!
    this.formatter = new ScramFormatter(this.scram)
    this.username = username
    this.password = password
    this.clientNonce = clientNonce
  }

  get complete(): boolean {
    return this.state === 'complete'
  }

  initialResponse(): Promise<Buffer> {
    if (this.state !== 'initial') throw new SaslClientError('SCRAM: started twice')
    const first = formatClientFirstMessage(saslName(this.username), this.clientNonce)
    this.clientFirstBare = first.clientFirstMessageBare
    this.state = 'first-sent'
    return Promise.resolve(Buffer.from(first.message, 'utf8'))
  }

  /** server-first: answers client-final; server-final: checks the server's signature, answers nothing. */
  evaluateChallenge(challenge: Buffer): Promise<Buffer | null> {
    if (this.state === 'first-sent') return this.clientFinal(challenge)
    if (this.state !== 'final-sent') return Promise.reject(new SaslClientError(`SCRAM: unexpected challenge in state ${this.state}`))
    try {
      this.checkServerFinal(challenge)
      return Promise.resolve(null)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  private checkServerFinal(challenge: Buffer): void {
    const final = parsed(() => parseServerFinalMessage(challenge))
    if (final.error !== undefined) throw new SaslClientError(`SCRAM: the server refused: ${final.error}`)
    if (this.expectedServerSignature === null) throw new SaslClientError('SCRAM: server-final before client-final')
    const got = final.serverSignature
    if (got.length !== this.expectedServerSignature.length || !timingSafeEqual(got, this.expectedServerSignature)) {
      throw new SaslClientError('SCRAM: the server signature does not match (the server does not know the credential)')
    }
    this.state = 'complete'
  }

  /** The client-final message for server-first (PBKDF2 runs off the event loop). */
  private async clientFinal(challenge: Buffer): Promise<Buffer> {
    const serverFirst = parsed(() => parseServerFirstMessage(challenge))
    const { nonce, salt, iterations } = serverFirst
    if (!nonce.startsWith(this.clientNonce) || nonce.length === this.clientNonce.length) {
      throw new SaslClientError('SCRAM: the server nonce does not extend the client nonce')
    }
    if (iterations < this.scram.minIterations || iterations > this.scram.maxIterations) {
      throw new SaslClientError(`SCRAM: ${iterations} iterations (${this.scram.minIterations}-${this.scram.maxIterations} accepted)`)
    }
    const salted = await this.formatter.saltedPasswordAsync(this.password, salt, iterations)
    const withoutProof = formatClientFinalMessageWithoutProof(nonce)
    const message = authMessage(this.clientFirstBare, challenge.toString('utf8'), withoutProof)
    const proof = this.formatter.clientProof(salted, message)
    this.expectedServerSignature = this.formatter.serverSignature(this.formatter.serverKey(salted), message)
    this.state = 'final-sent'
    return Buffer.from(formatClientFinalMessage(withoutProof, proof), 'utf8')
  }
}
