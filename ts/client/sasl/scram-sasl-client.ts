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
 * The server's nonce must extend ours, its iteration count be at least 4096 (Kafka's minimum)
 * and its signature match ours (compared in constant time): otherwise the exchange fails.
 * The math is node:crypto's (pbkdf2, HMAC, hash); the broker's side has the same formulas
 * in its ScramFormatter.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import { SaslClientError, type SaslClient } from './sasl-client.js'

const pbkdf2Async = promisify(pbkdf2)

/** Kafka's ScramMechanism.minIterations. */
export const SCRAM_MIN_ITERATIONS = 4096
/** Refused above this: a malicious server could make the client spin (Kafka's max is 16384). */
export const SCRAM_MAX_ITERATIONS = 16384

type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512'

const HASH: Record<ScramMechanism, { hash: string; length: number }> = {
  'SCRAM-SHA-256': { hash: 'sha256', length: 32 },
  'SCRAM-SHA-512': { hash: 'sha512', length: 64 },
}

/** RFC 5802's saslname: "=" and "," escaped. */
export function scramSaslName(username: string): string {
  return username.replace(/=/g, '=3D').replace(/,/g, '=2C')
}

/** Parses `k=v,k=v` SCRAM attributes (a value may hold "="). */
function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of message.split(',')) {
    const eq = part.indexOf('=')
    if (eq !== 1) throw new SaslClientError('SCRAM: a malformed server message')
    out.set(part[0]!, part.slice(2))
  }
  return out
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length)
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!
  return out
}

type State = 'initial' | 'first-sent' | 'final-sent' | 'complete'

export class ScramSaslClient implements SaslClient {
  readonly mechanism: ScramMechanism
  private readonly username: string
  private readonly password: string
  private readonly clientNonce: string
  private state: State = 'initial'
  private clientFirstBare = ''
  private expectedServerSignature: Buffer | null = null

  constructor(mechanism: ScramMechanism, username: string, password: string, clientNonce = randomBytes(24).toString('base64url')) {
    this.mechanism = mechanism
    this.username = username
    this.password = password
    this.clientNonce = clientNonce
  }

  get complete(): boolean {
    return this.state === 'complete'
  }

  initialResponse(): Promise<Buffer> {
    if (this.state !== 'initial') throw new SaslClientError('SCRAM: started twice')
    this.clientFirstBare = `n=${scramSaslName(this.username)},r=${this.clientNonce}`
    this.state = 'first-sent'
    return Promise.resolve(Buffer.from(`n,,${this.clientFirstBare}`, 'utf8'))
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
    const attrs = attributes(challenge.toString('utf8'))
    const error = attrs.get('e')
    if (error !== undefined) throw new SaslClientError(`SCRAM: the server refused: ${error}`)
    const v = attrs.get('v')
    if (v === undefined || this.expectedServerSignature === null) throw new SaslClientError('SCRAM: server-final without a signature')
    const got = Buffer.from(v, 'base64')
    if (got.length !== this.expectedServerSignature.length || !timingSafeEqual(got, this.expectedServerSignature)) {
      throw new SaslClientError('SCRAM: the server signature does not match (the server does not know the credential)')
    }
    this.state = 'complete'
  }

  /** The client-final message for server-first (PBKDF2 runs off the event loop). */
  private async clientFinal(challenge: Buffer): Promise<Buffer> {
    const serverFirst = challenge.toString('utf8')
    const attrs = attributes(serverFirst)
    const nonce = attrs.get('r')
    const salt = attrs.get('s')
    const iterations = Number(attrs.get('i'))
    if (nonce === undefined || salt === undefined || !nonce.startsWith(this.clientNonce) || nonce.length === this.clientNonce.length) {
      throw new SaslClientError('SCRAM: the server nonce does not extend the client nonce')
    }
    if (!Number.isInteger(iterations) || iterations < SCRAM_MIN_ITERATIONS || iterations > SCRAM_MAX_ITERATIONS) {
      throw new SaslClientError(`SCRAM: ${attrs.get('i')} iterations (${SCRAM_MIN_ITERATIONS}-${SCRAM_MAX_ITERATIONS} accepted)`)
    }
    const { hash, length } = HASH[this.mechanism]
    const salted = await pbkdf2Async(Buffer.from(this.password, 'utf8'), Buffer.from(salt, 'base64'), iterations, length, hash)
    const hmac = (key: Buffer, data: string | Buffer) => createHmac(hash, key).update(data).digest()
    const clientKey = hmac(salted, 'Client Key')
    const storedKey = createHash(hash).update(clientKey).digest()
    const withoutProof = `c=biws,r=${nonce}`
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`
    const proof = xor(clientKey, hmac(storedKey, authMessage))
    this.expectedServerSignature = hmac(hmac(salted, 'Server Key'), authMessage)
    this.state = 'final-sent'
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8')
  }
}
