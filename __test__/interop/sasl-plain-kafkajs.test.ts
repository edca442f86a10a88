/**
 * SASL/PLAIN with kafkajs 2 (SaslHandshake v1 + SaslAuthenticate) over a real socket: a user from
 * `listener.name.sasl_plaintext.plain.sasl.jaas.config` produces and consumes; a wrong password,
 * an unknown user and a mechanism the listener does not enable are refused with Kafka's errors.
 */
import { Kafka, logLevel, type SASLOptions } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { plainJaas, startSaslBroker, type SaslBroker } from '../helpers/sasl-broker.js'

let sasl: SaslBroker | undefined
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined)
  await sasl?.stop()
  sasl = undefined
})

const PROPS = {
  'sasl.enabled.mechanisms': 'PLAIN',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config': plainJaas({ alice: 'alice-secret', bob: 'b"ob secret' }),
}

function kafka(port: number, sasl: SASLOptions): Kafka {
  return new Kafka({ clientId: 'sasl-test', brokers: [`127.0.0.1:${port}`], sasl, logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 5000, authenticationTimeout: 5000 })
}

describe('SASL/PLAIN with kafkajs', () => {
  it('a configured user produces and consumes; the quoted password with an escaped quote works', async () => {
    sasl = await startSaslBroker(PROPS)
    for (const [username, password] of [
      ['alice', 'alice-secret'],
      ['bob', 'b"ob secret'],
    ]) {
      const client = kafka(sasl.port, { mechanism: 'plain', username, password })
      const admin = client.admin()
      cleanups.push(() => admin.disconnect())
      await admin.connect()
      await admin.createTopics({ topics: [{ topic: `t-${username}`, numPartitions: 1 }] })
      const producer = client.producer()
      cleanups.push(() => producer.disconnect())
      await producer.connect()
      await producer.send({ topic: `t-${username}`, messages: [{ value: `hello from ${username}` }] })
      const consumer = client.consumer({ groupId: `g-${username}`, maxWaitTimeInMs: 100 })
      cleanups.push(() => consumer.disconnect())
      await consumer.connect()
      await consumer.subscribe({ topic: `t-${username}`, fromBeginning: true })
      const got = await new Promise<string>((resolve) => void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) }))
      expect(got).toBe(`hello from ${username}`)
    }
  }, 60_000)

  it('refuses a wrong password, an unknown user and a mechanism not enabled', async () => {
    sasl = await startSaslBroker(PROPS)
    const attempt = async (options: SASLOptions): Promise<Error> => {
      const admin = kafka(sasl!.port, options).admin()
      cleanups.push(() => admin.disconnect())
      return admin.connect().then(
        () => new Error('connected'),
        (err: Error) => err,
      )
    }
    const wrong = await attempt({ mechanism: 'plain', username: 'alice', password: 'wrong' })
    expect(wrong.name).toBe('KafkaJSSASLAuthenticationError')
    expect(wrong.message).toContain('Authentication failed: Invalid username or password')
    const unknown = await attempt({ mechanism: 'plain', username: 'mallory', password: 'alice-secret' })
    expect(unknown.message).toContain('Authentication failed: Invalid username or password')
    const scram = await attempt({ mechanism: 'scram-sha-256', username: 'alice', password: 'alice-secret' })
    // kafkajs's text for UNSUPPORTED_SASL_MECHANISM (33)
    expect(scram.message).toBe('The broker does not support the requested SASL mechanism')
  }, 60_000)
})
