/**
 * ScramFormatter (Kafka's class of that name): SCRAM's functions of RFC 5802 section 2.2 and 3
 * for one hash, all from node:crypto (Hi is PBKDF2 with HMAC-H and one block of output), and the
 * escaping of user names in SCRAM messages (`=` as `=3D`, `,` as `=2C`).
 *
 * Passwords are taken as their UTF-8 bytes without SASLprep, as Kafka's `normalize` does, so
 * that a credential made by Kafka's tools and one made here for the same password agree.
 */
import { createHash, createHmac, pbkdf2, pbkdf2Sync, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import type { ScramCredential } from './scram-credential.js'
import type { ScramMechanism } from './scram-mechanism.js'

/** The hash a formatter works with: a ScramMechanism, or any hash for tests (RFC 5802's SHA-1). */
export type ScramHash = Pick<ScramMechanism, 'hashAlgorithm' | 'hashLength'>

const pbkdf2Async = promisify(pbkdf2)

const CLIENT_KEY = Buffer.from('Client Key', 'utf8')
const SERVER_KEY = Buffer.from('Server Key', 'utf8')

export class ScramFormatter {
  readonly hash: ScramHash

  constructor(hash: ScramHash) {
    this.hash = hash
  }

  hmac(key: Buffer, data: Buffer): Buffer {
    return createHmac(this.hash.hashAlgorithm, key).update(data).digest()
  }

  digest(data: Buffer): Buffer {
    return createHash(this.hash.hashAlgorithm).update(data).digest()
  }

  /** Hi(str, salt, i) of RFC 5802: PBKDF2 with HMAC-H as its PRF and a dkLen of H's length. */
  hi(str: Buffer, salt: Buffer, iterations: number): Buffer {
    return pbkdf2Sync(str, salt, iterations, this.hash.hashLength, this.hash.hashAlgorithm)
  }

  saltedPassword(password: string, salt: Buffer, iterations: number): Buffer {
    return this.hi(Buffer.from(password, 'utf8'), salt, iterations)
  }

  /** The same, computed on libuv's thread pool: a client's event loop keeps serving meanwhile. */
  saltedPasswordAsync(password: string, salt: Buffer, iterations: number): Promise<Buffer> {
    return pbkdf2Async(Buffer.from(password, 'utf8'), salt, iterations, this.hash.hashLength, this.hash.hashAlgorithm)
  }

  clientKey(saltedPassword: Buffer): Buffer {
    return this.hmac(saltedPassword, CLIENT_KEY)
  }

  storedKey(clientKey: Buffer): Buffer {
    return this.digest(clientKey)
  }

  serverKey(saltedPassword: Buffer): Buffer {
    return this.hmac(saltedPassword, SERVER_KEY)
  }

  /** ClientSignature = HMAC(StoredKey, AuthMessage). */
  clientSignature(storedKey: Buffer, authMessage: Buffer): Buffer {
    return this.hmac(storedKey, authMessage)
  }

  /** ServerSignature = HMAC(ServerKey, AuthMessage). */
  serverSignature(serverKey: Buffer, authMessage: Buffer): Buffer {
    return this.hmac(serverKey, authMessage)
  }

  /** ClientProof = ClientKey XOR ClientSignature (what a client sends). */
  clientProof(saltedPassword: Buffer, authMessage: Buffer): Buffer {
    const clientKey = this.clientKey(saltedPassword)
    return xor(clientKey, this.clientSignature(this.storedKey(clientKey), authMessage))
  }

  /** The stored key a proof implies: H(ClientSignature XOR ClientProof). */
  storedKeyFromProof(clientSignature: Buffer, clientProof: Buffer): Buffer {
    return this.digest(xor(clientSignature, clientProof))
  }

  /** The credential of a salted password (what AlterUserScramCredentials carries). */
  credentialFromSaltedPassword(salt: Buffer, saltedPassword: Buffer, iterations: number): ScramCredential {
    return { salt, storedKey: this.storedKey(this.clientKey(saltedPassword)), serverKey: this.serverKey(saltedPassword), iterations }
  }

  /** A new credential for a password, with a random salt (Kafka's generateCredential). */
  generateCredential(password: string, iterations: number, salt: Buffer = randomBytes(this.hash.hashLength)): ScramCredential {
    return this.credentialFromSaltedPassword(salt, this.saltedPassword(password, salt, iterations), iterations)
  }
}

export function xor(a: Buffer, b: Buffer): Buffer {
  if (a.length !== b.length) throw new RangeError(`xor of ${a.length} and ${b.length} bytes`)
  const out = Buffer.allocUnsafe(a.length)
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!
  return out
}

/** AuthMessage = client-first-message-bare "," server-first-message "," client-final-message-without-proof. */
export function authMessage(clientFirstMessageBare: string, serverFirstMessage: string, clientFinalMessageWithoutProof: string): Buffer {
  return Buffer.from(`${clientFirstMessageBare},${serverFirstMessage},${clientFinalMessageWithoutProof}`, 'utf8')
}

/** A user name as a SCRAM message carries it: `=` as `=3D`, then `,` as `=2C` (Kafka's saslName). */
export function saslName(username: string): string {
  return username.replaceAll('=', '=3D').replaceAll(',', '=2C')
}

/**
 * The user name a SCRAM message's saslname stands for (Kafka's `username`); undefined when it
 * holds a `=` that is not the start of `=2C` or `=3D`, or a `,`.
 */
export function username(name: string): string | undefined {
  if (!/^(?:[^=,]|=2C|=3D)*$/.test(name)) return undefined
  return name.replace(/=2C|=3D/g, (escape) => (escape === '=2C' ? ',' : '='))
}

/** A random nonce of printable characters without `,` (RFC 5802's `printable`): 144 bits, base64url. */
export function secureRandomNonce(): string {
  return randomBytes(18).toString('base64url')
}
