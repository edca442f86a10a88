/**
 * CredentialCache (Kafka's org.apache.kafka.common.security.authenticator.CredentialCache): the
 * SCRAM credentials a broker authenticates against, by mechanism and user, in memory. The broker
 * fills it from where the credentials are kept (a file of the data dir, or etcd for a cluster)
 * and updates it on every change, so a credential altered takes effect for the next
 * authentication; an exchange already past its first message keeps the credential it read.
 */
import type { ScramCredential } from './scram-credential.js'

/** What a SCRAM server asks: the credential of `username` for `mechanismName`, if there is one. */
export interface ScramCredentialLookup {
  scramCredential(mechanismName: string, username: string): ScramCredential | undefined
}

export class CredentialCache implements ScramCredentialLookup {
  /** mechanism name -> user -> credential */
  private readonly byMechanism = new Map<string, Map<string, ScramCredential>>()

  scramCredential(mechanismName: string, username: string): ScramCredential | undefined {
    return this.byMechanism.get(mechanismName)?.get(username)
  }

  /** Sets (credential) or removes (null) one user's credential for one mechanism. */
  update(mechanismName: string, username: string, credential: ScramCredential | null): void {
    let users = this.byMechanism.get(mechanismName)
    if (credential) {
      if (!users) this.byMechanism.set(mechanismName, (users = new Map()))
      users.set(username, credential)
    } else if (users) {
      users.delete(username)
      if (users.size === 0) this.byMechanism.delete(mechanismName)
    }
  }

  /** Replaces everything with `entries` (a reload). */
  replaceAll(entries: Iterable<{ mechanismName: string; username: string; credential: ScramCredential }>): void {
    this.byMechanism.clear()
    for (const e of entries) this.update(e.mechanismName, e.username, e.credential)
  }

  /** Every credential held. */
  *entries(): IterableIterator<{ mechanismName: string; username: string; credential: ScramCredential }> {
    for (const [mechanismName, users] of this.byMechanism) for (const [username, credential] of users) yield { mechanismName, username, credential }
  }
}
