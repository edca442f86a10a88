/**
 * `startBroker({ security })` (issue 26 item 6): a SASL_SSL broker with users, a super user and
 * ACLs in one call, its throw-away CA and certificate made on the spot, and the settings it hands
 * back used as they are by kafkajs, @platformatic/kafka, ferrolog's Consumer and the ferrolog CLI
 * (a client.properties from `formatJavaProperties`); a wrong password refused by each; ACLs
 * enforced (alice refused outside her prefix, the super user not). Then SSL with client
 * certificates (the certificate's CN is the principal the ACLs name; no certificate, no
 * connection) and SASL_PLAINTEXT.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Consumer as PlatformaticConsumer, Producer as PlatformaticProducer, stringDeserializers, stringSerializers } from '@platformatic/kafka'
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Consumer, formatJavaProperties, KafkaClientError, startBroker, type Broker, type EmbeddedClientSettings, type SecuredBroker } from '../../ts/index.js'
import { KafkaTool, kafkaToolOk } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')
const ALICE_PASSWORD = 'alice "Secret" \\ 17'
const ADMIN_PASSWORD = 'admin-Secret-42'

async function pollValues(consumer: Consumer, count: number): Promise<string[]> {
  const values: string[] = []
  const deadline = Date.now() + 30_000
  while (values.length < count && Date.now() < deadline) {
    for (const batch of await consumer.poll(1000)) for (const r of batch.records) values.push(r.value!.toString())
  }
  return values
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(Error)
  return err as Error
}

/** The messages of an error, its `errors` (AggregateError) and its causes: @platformatic/kafka nests the SASL failure. */
function errorChain(err: unknown): string[] {
  if (!(err instanceof Error)) return []
  const e = err as Error & { errors?: unknown[]; code?: string }
  return [`${e.code ?? e.name}: ${e.message}`, ...(e.errors ?? []).flatMap(errorChain), ...errorChain(e.cause)]
}

async function kafkajsProduce(settings: EmbeddedClientSettings, topic: string, values: string[]): Promise<void> {
  const producer = new Kafka({ clientId: 'embedded-secured', logLevel: logLevel.NOTHING, retry: { retries: 2 }, ...settings.kafkajs }).producer()
  await producer.connect()
  try {
    await producer.send({ topic, messages: values.map((value) => ({ value })) })
  } finally {
    await producer.disconnect()
  }
}

/** The partition's first `count` values; with `andNoMore`, one more poll must find nothing after them. */
async function ferrologRead(settings: EmbeddedClientSettings, topic: string, count: number, andNoMore = false): Promise<string[]> {
  const consumer = new Consumer({ ...settings.ferrolog, 'auto.offset.reset': 'earliest' })
  try {
    consumer.assign([{ topic, partition: 0 }])
    const values = await pollValues(consumer, count)
    if (andNoMore) for (const batch of await consumer.poll(500)) for (const r of batch.records) values.push(r.value!.toString())
    return values
  } finally {
    await consumer.close()
  }
}

describe('startBroker({ security: SASL_SSL })', () => {
  let broker: SecuredBroker
  let dir: string

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ferrolog-embedded-secured-'))
    broker = await startBroker({
      security: {
        protocol: 'SASL_SSL',
        mechanisms: ['SCRAM-SHA-512', 'PLAIN', 'SCRAM-SHA-256', 'OAUTHBEARER'],
        users: { alice: ALICE_PASSWORD, admin: ADMIN_PASSWORD },
        superUsers: ['admin'],
        acls: [
          { principal: 'User:alice', operation: 'ALL', resourceType: 'TOPIC', name: 'orders', patternType: 'PREFIXED' },
          { principal: 'User:alice', operation: 'READ', resourceType: 'GROUP', name: 'orders', patternType: 'PREFIXED' },
        ],
      },
    })
  }, 60_000)

  afterAll(async () => {
    await broker?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('listens on one SASL_SSL listener and hands back a CA, the users and the mechanisms', () => {
    expect(broker.listeners.map((l) => l.securityProtocol)).toEqual(['SASL_SSL'])
    expect(broker.security.caPem).toContain('-----BEGIN CERTIFICATE-----')
    expect(broker.security.users).toEqual(['alice', 'admin'])
    const settings = broker.security.clientSettings()
    expect(settings).toMatchObject({ bootstrapServers: broker.bootstrapServers, securityProtocol: 'SASL_SSL', mechanism: 'SCRAM-SHA-512', username: 'alice', password: ALICE_PASSWORD })
    expect(settings.kafkajs.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'alice', password: ALICE_PASSWORD })
    expect(settings.platformatic.sasl).toEqual({ mechanism: 'SCRAM-SHA-512', username: 'alice', password: ALICE_PASSWORD })
    expect(settings.ferrolog).toMatchObject({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.username': 'alice', 'ssl.ca.pem': broker.security.caPem })
    expect(() => broker.security.clientSettings('mallory')).toThrow(/no user mallory/)
    expect(() => broker.security.clientSettings('alice', 'GSSAPI' as 'PLAIN')).toThrow(/not enabled/)
  })

  it('kafkajs (SCRAM-SHA-512), @platformatic/kafka (PLAIN) and ferrolog (SCRAM-SHA-256) write and read with the settings as handed back', async () => {
    const topic = 'orders-interop'
    await kafkajsProduce(broker.security.clientSettings('alice'), topic, ['kafkajs-1', 'kafkajs-2'])

    const plain = broker.security.clientSettings('alice', 'PLAIN')
    const producer = new PlatformaticProducer({ clientId: 'embedded-secured-p', serializers: stringSerializers, timeout: 10_000, retries: 2, ...plain.platformatic })
    try {
      await producer.send({ messages: [{ topic, value: 'platformatic-1' }] })
    } finally {
      await producer.close().catch(() => undefined)
    }

    const expected = ['kafkajs-1', 'kafkajs-2', 'platformatic-1']
    expect(await ferrologRead(broker.security.clientSettings('alice', 'SCRAM-SHA-256'), topic, 3)).toEqual(expected)

    const kafkajsConsumer = new Kafka({ clientId: 'embedded-secured-c', logLevel: logLevel.NOTHING, ...broker.security.clientSettings('alice').kafkajs }).consumer({ groupId: 'orders-readers' })
    const seen: string[] = []
    try {
      await kafkajsConsumer.connect()
      await kafkajsConsumer.subscribe({ topic, fromBeginning: true })
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`kafkajs consumed ${seen.length} of 3`)), 30_000)
        void kafkajsConsumer.run({
          eachMessage: async ({ message }) => {
            seen.push(message.value!.toString())
            if (seen.length === 3) {
              clearTimeout(timer)
              resolve()
            }
          },
        })
      })
    } finally {
      await kafkajsConsumer.disconnect()
    }
    expect(seen).toEqual(expected)

    const platformaticConsumer = new PlatformaticConsumer({
      clientId: 'embedded-secured-pc',
      groupId: 'orders-platformatic',
      deserializers: stringDeserializers,
      timeout: 10_000,
      retries: 2,
      maxWaitTime: 200,
      ...plain.platformatic,
    })
    try {
      const stream = await platformaticConsumer.consume({ topics: [topic], mode: 'earliest', autocommit: false })
      const got: string[] = []
      for await (const message of stream) {
        got.push(message.value as string)
        if (got.length === 3) break
      }
      await stream.close().catch(() => undefined)
      expect(got).toEqual(expected)
    } finally {
      await (platformaticConsumer.close(true) as unknown as Promise<void>).catch(() => undefined)
    }
  }, 120_000)

  it('OAUTHBEARER: an unsecured token for the user, from kafkajs and ferrolog', async () => {
    const settings = broker.security.clientSettings('alice', 'OAUTHBEARER')
    await kafkajsProduce(settings, 'orders-oauth', ['token-1'])
    expect(await ferrologRead(settings, 'orders-oauth', 1)).toEqual(['token-1'])
  }, 60_000)

  it('refuses a wrong password from kafkajs, @platformatic/kafka and ferrolog, never echoing it', async () => {
    const wrong = 'not-alices-password'
    for (const mechanism of ['SCRAM-SHA-512', 'PLAIN'] as const) {
      const good = broker.security.clientSettings('alice', mechanism)
      const kafkajs = new Kafka({ ...good.kafkajs, logLevel: logLevel.NOTHING, retry: { retries: 0 }, sasl: { ...good.kafkajs.sasl!, password: wrong } as never }).producer()
      const kafkajsError = await rejection(kafkajs.connect())
      expect(kafkajsError.name).toBe('KafkaJSSASLAuthenticationError')
      await kafkajs.disconnect().catch(() => undefined)

      const platformatic = new PlatformaticProducer({
        clientId: 'wrong',
        serializers: stringSerializers,
        timeout: 5_000,
        retries: 0,
        ...good.platformatic,
        sasl: { ...good.platformatic.sasl!, password: wrong },
      })
      const platformaticError = await rejection(platformatic.send({ messages: [{ topic: 'orders-wrong', value: 'x' }] }))
      expect(errorChain(platformaticError)).toContain('PLT_KFK_AUTHENTICATION: SASL authentication failed.')
      expect(errorChain(platformaticError).join('\n')).not.toContain(wrong)
      await platformatic.close().catch(() => undefined)

      const consumer = new Consumer({ ...good.ferrolog, 'sasl.password': wrong })
      try {
        consumer.assign([{ topic: 'orders-interop', partition: 0 }])
        const err = await rejection(consumer.poll(5000))
        expect(err).toBeInstanceOf(KafkaClientError)
        expect((err as KafkaClientError).code).toBe('SASL_AUTHENTICATION_FAILED')
        expect(err.message).not.toContain(wrong)
      } finally {
        await consumer.close()
      }
    }
  }, 90_000)

  it('enforces the ACLs: alice is refused outside her prefix, the super user is not', async () => {
    const alice = broker.security.clientSettings('alice')
    const refused = new Consumer({ ...alice.ferrolog, 'auto.offset.reset': 'earliest' })
    try {
      refused.assign([{ topic: 'payments', partition: 0 }])
      expect(((await rejection(refused.poll(5000))) as KafkaClientError).code).toBe('TOPIC_AUTHORIZATION_FAILED')
    } finally {
      await refused.close()
    }
    const error = await rejection(kafkajsProduce(alice, 'payments', ['x']))
    expect(error.message).toMatch(/authoriz/i)
    await kafkajsProduce(broker.security.clientSettings('admin'), 'payments', ['by-admin'])
    expect(await ferrologRead(broker.security.clientSettings('admin', 'PLAIN'), 'payments', 1)).toEqual(['by-admin'])
  }, 60_000)

  it('the ferrolog CLI reads with a client.properties made from the Java settings (--command-config)', async () => {
    const file = join(dir, 'client.properties')
    writeFileSync(file, formatJavaProperties(broker.security.clientSettings('alice').java))
    const consumed = await runProcess(
      process.execPath,
      [CLI, 'consume', '--bootstrap-server', broker.bootstrapServers, '--topic', 'orders-interop', '--offset', 'earliest', '--exit-at-end', '--command-config', file],
      '',
      60_000,
    )
    expect(consumed.stderr).toBe('')
    expect(consumed.stdout.trim().split('\n')).toEqual(['kafkajs-1', 'kafkajs-2', 'platformatic-1'])
    expect(consumed.status).toBe(0)
  }, 60_000)

  it("Kafka's Java tools take the Java settings as a client.properties: kafka-acls lists the ACLs, kafka-configs the SCRAM users", async () => {
    const file = join(dir, 'admin.properties')
    writeFileSync(file, formatJavaProperties(broker.security.clientSettings('admin', 'SCRAM-SHA-512').java))
    const acls = await kafkaToolOk(broker.port, KafkaTool.ACLS, ['--command-config', file, '--list'])
    expect(acls).toContain('ResourcePattern(resourceType=TOPIC, name=orders, patternType=PREFIXED)')
    expect(acls).toContain('(principal=User:alice, host=*, operation=ALL, permissionType=ALLOW)')
    expect(acls).toContain('ResourcePattern(resourceType=GROUP, name=orders, patternType=PREFIXED)')
    const users = await kafkaToolOk(broker.port, KafkaTool.CONFIGS, ['--command-config', file, '--describe', '--entity-type', 'users', '--entity-name', 'alice'])
    expect(users).toContain("SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=4096")
  }, 60_000)
})

describe('startBroker({ security: SSL }) with client certificates', () => {
  let broker: SecuredBroker
  beforeAll(async () => {
    broker = await startBroker({
      security: { protocol: 'SSL', users: ['alice', 'bob'], acls: [{ principal: 'User:alice', operation: 'ALL', resourceType: 'TOPIC', name: 'certs' }] },
    })
  }, 60_000)
  afterAll(() => broker?.stop())

  it("each user's certificate is its principal: alice may write the topic her ACL names, bob may not; no certificate, no connection", async () => {
    const alice = broker.security.clientSettings('alice')
    expect(alice.certificatePem).toContain('-----BEGIN CERTIFICATE-----')
    expect(alice.mechanism).toBeUndefined()
    await kafkajsProduce(alice, 'certs', ['from-alice'])
    expect(await ferrologRead(alice, 'certs', 1)).toEqual(['from-alice'])

    const bob = new Consumer({ ...broker.security.clientSettings('bob').ferrolog })
    try {
      bob.assign([{ topic: 'certs', partition: 0 }])
      expect(((await rejection(bob.poll(5000))) as KafkaClientError).code).toBe('TOPIC_AUTHORIZATION_FAILED')
    } finally {
      await bob.close()
    }

    const { 'ssl.certificate.pem': _cert, 'ssl.key.pem': _key, ...withoutCertificate } = alice.ferrolog
    const anonymous = new Consumer(withoutCertificate)
    try {
      anonymous.assign([{ topic: 'certs', partition: 0 }])
      const err = await rejection(anonymous.poll(5000))
      expect(err).toBeInstanceOf(KafkaClientError)
    } finally {
      await anonymous.close()
    }
  }, 60_000)
})

describe('startBroker({ security: SASL_PLAINTEXT })', () => {
  it('serves SCRAM users without TLS (no CA made) and refuses a client that does not authenticate', async () => {
    const broker: Broker & SecuredBroker = await startBroker({ security: { protocol: 'SASL_PLAINTEXT', users: { carol: 'carol-pw' } } })
    try {
      expect(broker.security.caPem).toBeUndefined()
      const carol = broker.security.clientSettings('carol')
      expect(carol.kafkajs.ssl).toBeUndefined()
      await kafkajsProduce(carol, 'plain-sasl', ['v'])
      expect(await ferrologRead(carol, 'plain-sasl', 1)).toEqual(['v'])
      // A request before authentication closes the connection, as Kafka's broker does.
      const unauthenticated = new Kafka({ brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer()
      await unauthenticated.connect() // ApiVersions only: answered before authentication
      expect(await rejection(unauthenticated.send({ topic: 'plain-sasl', messages: [{ value: 'unauthenticated' }] }))).toBeInstanceOf(Error)
      await unauthenticated.disconnect().catch(() => undefined)
      expect(await ferrologRead(carol, 'plain-sasl', 1, true)).toEqual(['v'])
    } finally {
      await broker.stop()
    }
  }, 60_000)

  it('refuses options it cannot honour before starting anything', async () => {
    await expect(startBroker({ security: { protocol: 'SASL_SSL', users: ['dave'] } })).rejects.toThrow(/must give passwords/)
    await expect(startBroker({ security: { protocol: 'SSL', mechanisms: ['PLAIN'] } })).rejects.toThrow(/needs a SASL protocol/)
    await expect(startBroker({ security: { protocol: 'SASL_PLAINTEXT', clientAuth: 'required', users: { a: 'b' } } })).rejects.toThrow(/needs SSL or SASL_SSL/)
    await expect(startBroker({ security: { protocol: 'SASL_SSL', users: { a: 'b' }, acls: [{ principal: 'alice', operation: 'READ', resourceType: 'TOPIC', name: 't' }] } })).rejects.toThrow(
      /security.acls/,
    )
    await expect(startBroker({ security: { protocol: 'PLAINTEXT' as 'SSL' } })).rejects.toThrow(/SSL, SASL_PLAINTEXT or SASL_SSL/)
  })
})
