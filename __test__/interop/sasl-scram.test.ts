/**
 * SASL/SCRAM-SHA-256 and SCRAM-SHA-512 end to end, credentials set with AlterUserScramCredentials:
 * kafkajs (both mechanisms) and @platformatic/kafka produce and consume on a SASL_PLAINTEXT
 * listener; a wrong password and an unknown user are refused alike with Kafka's message; a
 * password changed while the broker runs is the one the next connection needs; no password, salted
 * password, StoredKey or ServerKey appears in the broker's log.
 */
import { Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka'
import { Kafka, logLevel, type SASLOptions } from 'kafkajs'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { fetchKafkaJars, kafkaToolOk, runKafkaTool } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'
import { lineLogger, startSaslBroker, type SaslBroker } from '../helpers/sasl-broker.js'
import { setScramCredentials } from '../helpers/scram-credentials.js'

let sasl: SaslBroker | undefined
const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined)
  await sasl?.stop()
  sasl = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

const PROPS = { 'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512' }
const INVALID = (m: string) => `Authentication failed during authentication due to invalid credentials with SASL mechanism ${m}`

function kafka(port: number, sasl: SASLOptions): Kafka {
  return new Kafka({ clientId: 'scram-test', brokers: [`127.0.0.1:${port}`], sasl, logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 5000, authenticationTimeout: 5000 })
}

/** The messages of an error, its causes and its aggregated errors, depth first. */
function causes(err: unknown): string[] {
  if (!(err instanceof Error)) return []
  const e = err as Error & { errors?: unknown[]; response?: { errorMessage?: string } }
  return [e.message, e.response?.errorMessage ?? '', ...causes(e.cause), ...(e.errors ?? []).flatMap(causes)]
}

async function attempt(port: number, options: SASLOptions): Promise<Error | null> {
  const admin = kafka(port, options).admin()
  cleanups.push(() => admin.disconnect())
  return admin.connect().then(
    async () => {
      await admin.listTopics()
      return null
    },
    (err: Error) => err,
  )
}

describe('SASL/SCRAM', () => {
  it('kafkajs produces and consumes with SCRAM-SHA-256 and SCRAM-SHA-512', async () => {
    sasl = await startSaslBroker(PROPS)
    await setScramCredentials(sasl.plaintextPort, [
      { user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'alice-secret', iterations: 8192 },
      { user: 'bob', mechanism: 'SCRAM-SHA-512', password: 'bob,secret=1' },
    ])
    for (const [username, password, mechanism] of [
      ['alice', 'alice-secret', 'scram-sha-256'],
      ['bob', 'bob,secret=1', 'scram-sha-512'],
    ] as const) {
      const client = kafka(sasl.port, { mechanism, username, password })
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
  }, 90_000)

  it('refuses a wrong password and an unknown user alike; a password changed live is the one new connections need; no secret is logged', async () => {
    const lines: string[] = []
    sasl = await startSaslBroker(PROPS, { logger: lineLogger(lines) })
    await setScramCredentials(sasl.plaintextPort, [
      { user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'first-password' },
      { user: 'carol', mechanism: 'SCRAM-SHA-512', password: 'carol-password' },
    ])
    expect(await attempt(sasl.port, { mechanism: 'scram-sha-256', username: 'alice', password: 'first-password' })).toBeNull()
    const wrong = await attempt(sasl.port, { mechanism: 'scram-sha-256', username: 'alice', password: 'not-the-password' })
    expect(wrong?.name).toBe('KafkaJSSASLAuthenticationError')
    expect(wrong?.message).toContain(INVALID('SCRAM-SHA-256'))
    const unknown = await attempt(sasl.port, { mechanism: 'scram-sha-256', username: 'mallory', password: 'first-password' })
    expect(unknown?.message).toContain(INVALID('SCRAM-SHA-256'))
    // carol has a SCRAM-SHA-512 credential only.
    expect((await attempt(sasl.port, { mechanism: 'scram-sha-256', username: 'carol', password: 'carol-password' }))?.message).toContain(INVALID('SCRAM-SHA-256'))

    await setScramCredentials(sasl.plaintextPort, [{ user: 'alice', mechanism: 'SCRAM-SHA-256', password: 'second-password', iterations: 4096 }])
    expect((await attempt(sasl.port, { mechanism: 'scram-sha-256', username: 'alice', password: 'first-password' }))?.message).toContain(INVALID('SCRAM-SHA-256'))
    expect(await attempt(sasl.port, { mechanism: 'scram-sha-256', username: 'alice', password: 'second-password' })).toBeNull()

    const log = lines.join('\n')
    expect(log).toMatch(/SCRAM-SHA-256/) // the failures were logged
    for (const secret of ['first-password', 'second-password', 'not-the-password', 'carol-password']) expect(log).not.toContain(secret)
    for (const { credential } of sasl.broker.scramCredentials.cache.entries()) {
      for (const key of [credential.storedKey, credential.serverKey]) {
        expect(log).not.toContain(key.toString('base64'))
        expect(log).not.toContain(key.toString('hex'))
      }
    }
  }, 90_000)

  it('@platformatic/kafka produces and consumes with SCRAM-SHA-512', async () => {
    sasl = await startSaslBroker(PROPS)
    await setScramCredentials(sasl.plaintextPort, [{ user: 'dave', mechanism: 'SCRAM-SHA-512', password: 'dave-secret' }])
    await sasl.broker.createTopic('platformatic-scram', 1, {})
    const options = { clientId: 'platformatic-scram', bootstrapBrokers: [`127.0.0.1:${sasl.port}`], sasl: { mechanism: 'SCRAM-SHA-512' as const, username: 'dave', password: 'dave-secret' } }
    const producer = new Producer({ ...options, serializers: stringSerializers })
    cleanups.push(() => producer.close())
    await producer.send({ messages: [{ topic: 'platformatic-scram', key: 'k', value: 'over scram' }] })
    const consumer = new Consumer({ ...options, groupId: 'platformatic-scram-group', deserializers: stringDeserializers, maxWaitTime: 100 })
    cleanups.push(() => consumer.close(true))
    const stream = await consumer.consume({ topics: ['platformatic-scram'], mode: 'earliest' })
    cleanups.push(() => stream.close())
    const got = await new Promise<string>((resolve, reject) => {
      stream.once('data', (m: { value: string }) => resolve(m.value))
      stream.once('error', reject)
    })
    expect(got).toBe('over scram')

    const refused = new Producer({ ...options, sasl: { ...options.sasl, password: 'wrong' }, serializers: stringSerializers, retries: 0 })
    cleanups.push(() => refused.close())
    const err = await refused.send({ messages: [{ topic: 'platformatic-scram', value: 'x' }] }).then(
      () => null,
      (e: Error) => e,
    )
    expect(err).not.toBeNull()
    expect(causes(err!).join('\n')).toContain(INVALID('SCRAM-SHA-512'))
  }, 90_000)

  it("Kafka's console producer and consumer authenticate with SCRAM-SHA-512 from a client.properties", async () => {
    sasl = await startSaslBroker(PROPS)
    // (kafka-configs cannot reach the broker's PLAINTEXT port here: the broker advertises the SASL one.)
    await setScramCredentials(sasl.plaintextPort, [{ user: 'erin', mechanism: 'SCRAM-SHA-512', password: 'erin secret=1,2', iterations: 8192 }])
    await sasl.broker.createTopic('java-scram', 1, {})
    const dir = tempDir('scram-client-')
    const properties = (password: string) => {
      const file = join(dir, `client-${password.length}.properties`)
      const jaas = `org.apache.kafka.common.security.scram.ScramLoginModule required username="erin" password="${password}";`
      writeFileSync(file, `security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=${jaas}\n`)
      return file
    }
    const good = properties('erin secret=1,2')
    await kafkaToolOk(sasl.port, 'org.apache.kafka.tools.ConsoleProducer', ['--topic', 'java-scram', '--command-config', good], 'one\ntwo\nthree\n')
    const consumed = await kafkaToolOk(sasl.port, 'org.apache.kafka.tools.consumer.ConsoleConsumer', [
      '--topic',
      'java-scram',
      '--from-beginning',
      '--max-messages',
      '3',
      '--timeout-ms',
      '30000',
      '--command-config',
      good,
    ])
    expect(consumed.trim().split('\n')).toEqual(['one', 'two', 'three'])

    const refused = await runKafkaTool(sasl.port, 'org.apache.kafka.tools.consumer.ConsoleConsumer', [
      '--topic',
      'java-scram',
      '--from-beginning',
      '--max-messages',
      '1',
      '--timeout-ms',
      '10000',
      '--command-config',
      properties('wrong'),
    ])
    expect(refused.stdout + refused.stderr).toContain(`SaslAuthenticationException: ${INVALID('SCRAM-SHA-512')}`)

    // The Java client's delegation-token login (tokenauth=true) is refused, saying why.
    const tokenFile = join(dir, 'token.properties')
    const tokenJaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="erin" password="erin secret=1,2" tokenauth="true";'
    writeFileSync(tokenFile, `security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=${tokenJaas}\n`)
    const token = await runKafkaTool(sasl.port, 'org.apache.kafka.tools.consumer.ConsoleConsumer', [
      '--topic',
      'java-scram',
      '--from-beginning',
      '--max-messages',
      '1',
      '--timeout-ms',
      '10000',
      '--command-config',
      tokenFile,
    ])
    expect(token.stdout + token.stderr).toContain('SaslAuthenticationException: Authentication failed: delegation token authentication (tokenauth) is not supported by this broker')
  }, 180_000)
})
