/**
 * ScramCredential (Kafka's org.apache.kafka.common.security.scram.ScramCredential): what a broker
 * keeps of a user's password for one SCRAM mechanism (RFC 5802 section 3), never the password
 * itself nor the salted password:
 *
 *   SaltedPassword = Hi(password, salt, iterations)
 *   StoredKey      = H(HMAC(SaltedPassword, "Client Key"))
 *   ServerKey      = HMAC(SaltedPassword, "Server Key")
 *
 * StoredKey verifies a client's proof; ServerKey signs the server's final message. Both are
 * secrets (anyone holding ServerKey can impersonate the broker, StoredKey allows an offline
 * attack on the password): they are never logged, and `describeCredential` is what may be shown.
 */

export interface ScramCredential {
  readonly salt: Buffer
  readonly storedKey: Buffer
  readonly serverKey: Buffer
  readonly iterations: number
}

/** What may be shown of a credential (Kafka's ScramCredentialValue.toString hides the rest). */
export function describeCredential(credential: ScramCredential): string {
  return `ScramCredential(iterations=${credential.iterations}, salt=[hidden], storedKey=[hidden], serverKey=[hidden])`
}
