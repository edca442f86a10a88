/**
 * SASL PLAIN (RFC 4616), client side: one message `authzid NUL authcid NUL passwd` (authzid
 * empty: the user acts as itself), in UTF-8. The server answers with empty bytes on success.
 * Send it only over TLS outside tests: the password travels as is.
 */
import { SaslClientError, type SaslClient } from './sasl-client.js'

export class PlainSaslClient implements SaslClient {
  readonly mechanism = 'PLAIN'
  private done = false
  private readonly username: string
  private readonly password: string

  constructor(username: string, password: string) {
    if (username.includes('\0') || password.includes('\0')) throw new SaslClientError('PLAIN: a username or password with a NUL character')
    this.username = username
    this.password = password
  }

  get complete(): boolean {
    return this.done
  }

  initialResponse(): Promise<Buffer> {
    this.done = true
    return Promise.resolve(Buffer.from(`\0${this.username}\0${this.password}`, 'utf8'))
  }

  evaluateChallenge(challenge: Buffer): Promise<Buffer | null> {
    if (challenge.length > 0) return Promise.reject(new SaslClientError('PLAIN: the server sent a challenge after the credentials'))
    return Promise.resolve(null)
  }
}
