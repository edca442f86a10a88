/**
 * Sets users' SCRAM credentials on a broker over the wire, as Kafka's admin client does
 * (AlterUserScramCredentials with a random salt and the salted password the client computed).
 */
import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import { alterUserScramCredentialsCodec } from '../../ts/protocol/apis/alter-user-scram-credentials.js'
import { ScramFormatter } from '../../ts/security/scram/scram-formatter.js'
import { scramMechanismForName } from '../../ts/security/scram/scram-mechanism.js'
import { connectTo, KafkaWire } from './kafka-socket.js'

export interface ScramUser {
  user: string
  mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'
  password: string
  iterations?: number
}

/** Upserts every user's credential in one AlterUserScramCredentials on `port` (a PLAINTEXT listener); fails the test on any error. */
export async function setScramCredentials(port: number, users: ScramUser[]): Promise<void> {
  const wire = new KafkaWire(await connectTo(port), 'scram-setup')
  try {
    const upsertions = users.map(({ user, mechanism, password, iterations = 4096 }) => {
      const m = scramMechanismForName(mechanism)!
      const salt = randomBytes(32)
      return { name: user, mechanism: m.type, iterations, salt, saltedPassword: new ScramFormatter(m).saltedPassword(password, salt, iterations) }
    })
    const response = await wire.send(alterUserScramCredentialsCodec, 0, { deletions: [], upsertions })
    expect(response.results.map((r) => [r.user, r.errorCode, r.errorMessage])).toEqual(users.map((u) => [u.user, 0, null]))
  } finally {
    wire.close()
  }
}
