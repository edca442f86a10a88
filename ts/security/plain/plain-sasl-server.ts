/**
 * SASL/PLAIN (RFC 4616), the broker's side as Kafka's PlainSaslServer and
 * PlainServerCallbackHandler: one client message `[authzid] NUL authcid NUL passwd` (UTF-8), checked
 * against the users of the listener's PlainLoginModule JAAS entry (`user_<name>="<password>"`).
 * The authorization id must be empty or equal to the user name, which becomes the principal
 * (`User:<name>`). Kafka's error messages; none holds the password or says whether the user exists.
 *
 * Passwords are compared in constant time: SHA-256 of each, then node:crypto's timingSafeEqual (the
 * digests have one length whatever the passwords' lengths), and an unknown user is compared with a
 * random digest, so the time taken says nothing about either.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { jaasOption, type JaasEntry } from '../jaas-config.js'
import { SaslAuthenticationError, type SaslServer, type SaslServerFactory } from '../sasl-server.js'

export const PLAIN_MECHANISM = 'PLAIN'
export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule'
/** Kafka's PlainServerCallbackHandler.JAAS_USER_PREFIX. */
export const JAAS_USER_PREFIX = 'user_'

/** Checks one user's password (Kafka's PlainServerCallbackHandler.authenticate). */
export interface PlainCredentials {
  authenticate(username: string, password: Buffer): boolean
}

function digest(bytes: Buffer | string): Buffer {
  return createHash('sha256').update(bytes).digest()
}

/** The users of PlainLoginModule's `user_<name>` options. */
export function plainCredentialsFromJaas(entries: readonly JaasEntry[]): PlainCredentials {
  const unknownUser = randomBytes(32)
  return {
    authenticate(username, password) {
      const expected = jaasOption(entries, JAAS_USER_PREFIX + username, PLAIN_LOGIN_MODULE)
      const matches = timingSafeEqual(digest(password), expected === undefined ? unknownUser : digest(expected))
      return expected !== undefined && matches
    },
  }
}

/** Splits at the first three NULs (Kafka's extractTokens): exactly three parts or a failure. */
function extractTokens(message: Buffer): [authzid: Buffer, authcid: Buffer, password: Buffer] {
  const tokens: Buffer[] = []
  let start = 0
  for (let i = 0; i < 4; i++) {
    const end = message.indexOf(0, start)
    if (end < 0) {
      tokens.push(message.subarray(start))
      break
    }
    tokens.push(message.subarray(start, end))
    start = end + 1
  }
  const [authzid, authcid, password] = tokens
  if (authzid === undefined || authcid === undefined || password === undefined || tokens.length !== 3) {
    throw new SaslAuthenticationError(`Invalid SASL/PLAIN response: expected 3 tokens, got ${tokens.length}`)
  }
  return [authzid, authcid, password]
}

export class PlainSaslServer implements SaslServer {
  readonly mechanism = PLAIN_MECHANISM
  private done = false
  private user = ''

  constructor(private readonly credentials: PlainCredentials) {}

  get complete(): boolean {
    return this.done
  }

  async evaluateResponse(response: Buffer): Promise<Buffer> {
    if (this.done) throw new SaslAuthenticationError('Authentication exchange has completed')
    const [authzid, authcid, password] = extractTokens(response)
    // Java's String(bytes, UTF_8): malformed sequences become U+FFFD, as Buffer's utf8 decoding does.
    const username = authcid.toString('utf8')
    if (username === '') throw new SaslAuthenticationError('Authentication failed: username not specified')
    if (password.length === 0) throw new SaslAuthenticationError('Authentication failed: password not specified')
    // The password's bytes as Kafka sees them: decoded, then compared as characters.
    if (!this.credentials.authenticate(username, Buffer.from(password.toString('utf8'), 'utf8'))) throw new SaslAuthenticationError('Authentication failed: Invalid username or password')
    const authorizationId = authzid.toString('utf8')
    if (authorizationId !== '' && authorizationId !== username) throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username')
    this.user = username
    this.done = true
    return Buffer.alloc(0)
  }

  authorizationId(): string {
    if (!this.done) throw new Error('Authentication exchange has not completed')
    return this.user
  }
}

export function plainSaslServerFactory(credentials: PlainCredentials): SaslServerFactory {
  return () => new PlainSaslServer(credentials)
}
