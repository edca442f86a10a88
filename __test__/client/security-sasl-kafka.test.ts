/**
 * ferrolog's client and CLI against Apache Kafka 4.4 with a SASL_SSL listener
 * (tools/kafka/run-broker.sh --secure-listener SASL_SSL, one broker for the file): PLAIN,
 * SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (Kafka's unsecured-token validator), the
 * StandardAuthorizer with `User:admin` as super user. Kafka is the reference: what passes here
 * is what ferrolog's own broker must answer the same way.
 *
 * - each mechanism: `ferrolog topics` with --command-config (a Kafka client.properties with
 *   sasl.jaas.config), `ferrolog produce` with -X (librdkafka's names), a Consumer group and
 *   `ferrolog consume` read the records back;
 * - a wrong password or an unknown user: SASL_AUTHENTICATION_FAILED, not retried, and the
 *   password in no message; a CA that did not sign the broker: SSL_HANDSHAKE_FAILED;
 * - an authenticated user without ACLs: TOPIC_AUTHORIZATION_FAILED, then allowed once
 *   kafka-acls.sh grants READ;
 * - KIP-368: SCRAM-SHA-256 sessions last 3 s on this broker; a connection kept busy for longer
 *   re-authenticates in place, and no request on it fails;
 * - kafkajs and @platformatic/kafka write over the same listener (PLAIN, SCRAM-SHA-512,
 *   OAUTHBEARER) and ferrolog reads what they wrote.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Producer as PlatformaticProducer, stringSerializers } from '@platformatic/kafka'
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { clientSecurityFrom } from '../../ts/client/client-security.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { unsecuredJwt } from '../../ts/client/sasl/oauth-bearer-sasl-client.js'
import { createCertificateAuthority } from '../../ts/security/certificates.js'
import { KafkaTool, kafkaToolOk, startSecuredKafka, stopKafkaBroker, type SecuredKafka } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'

const ROOT = join(__dirname, '../..')
const CLI = join(ROOT, 'dist/ts/cli/main.js')
const ferrolog = (args: string[], input = '') => runProcess(process.execPath, [CLI, ...args], input, 60_000)

const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const
type Mechanism = (typeof MECHANISMS)[number]
const ADMIN_PASSWORD = 'admin-Secret-42'
const ALICE_PASSWORD = 'alice-Secret-17'

let dir: string
let kafka: SecuredKafka
let bootstrap: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-sasl-'))
  kafka = await startSecuredKafka(dir, {
    listener: 'SASL_SSL',
    ca: createCertificateAuthority(),
    mechanisms: [...MECHANISMS],
    plainUsers: { admin: ADMIN_PASSWORD, alice: ALICE_PASSWORD },
    scramUsers: [
      { mechanism: 'SCRAM-SHA-256', name: 'admin', password: ADMIN_PASSWORD },
      { mechanism: 'SCRAM-SHA-512', name: 'admin', password: ADMIN_PASSWORD },
    ],
    superUsers: ['User:admin'],
    // KIP-368: only SCRAM-SHA-256 sessions expire (after 3 s), for the re-authentication case.
    set: ['listener.name.sasl_ssl.scram-sha-256.connections.max.reauth.ms=3000'],
  })
  bootstrap = `127.0.0.1:${kafka.securePort}`
}, 150_000)

afterAll(() => {
  if (!dir) return
  stopKafkaBroker(dir)
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

/** The client config (Kafka's dotted names) for `mechanism` as `user`. */
function saslConfig(mechanism: Mechanism, user = 'admin', password = ADMIN_PASSWORD): Record<string, unknown> {
  const base = { 'security.protocol': 'SASL_SSL', 'ssl.ca.location': kafka.caFile, 'sasl.mechanism': mechanism }
  if (mechanism === 'OAUTHBEARER') return { ...base, oauthBearerProvider: () => ({ value: unsecuredJwt({ principal: user }) }) }
  return { ...base, 'sasl.username': user, 'sasl.password': password }
}

/** librdkafka-style -X arguments for `mechanism` as admin. */
function dashX(mechanism: Mechanism, password = ADMIN_PASSWORD): string[] {
  const props = ['security.protocol=SASL_SSL', `ssl.ca.location=${kafka.caFile}`, `sasl.mechanism=${mechanism}`]
  if (mechanism === 'OAUTHBEARER') props.push('enable.sasl.oauthbearer.unsecure.jwt=true', 'sasl.oauthbearer.config=principal=admin')
  else props.push('sasl.username=admin', `sasl.password=${password}`)
  return props.flatMap((p) => ['-X', p])
}

/** A Kafka client.properties for `mechanism` as admin (sasl.jaas.config continued over two lines). */
function commandConfig(mechanism: Mechanism): string {
  const jaas =
    mechanism === 'PLAIN'
      ? `org.apache.kafka.common.security.plain.PlainLoginModule required \\\n    username="admin" password="${ADMIN_PASSWORD}";`
      : mechanism === 'OAUTHBEARER'
        ? 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \\\n    unsecuredLoginStringClaim_sub="admin";'
        : `org.apache.kafka.common.security.scram.ScramLoginModule required \\\n    username="admin" password="${ADMIN_PASSWORD}";`
  const file = join(dir, `client-${mechanism}.properties`)
  writeFileSync(
    file,
    `# Kafka tools' client properties\nsecurity.protocol=SASL_SSL\nssl.truststore.type=PEM\nssl.truststore.location=${kafka.caFile}\nsasl.mechanism=${mechanism}\nsasl.jaas.config=${jaas}\n`,
  )
  return file
}

/** Polls until `count` records came (or 30 s passed); their values. */
async function pollValues(consumer: Consumer, count: number): Promise<string[]> {
  const values: string[] = []
  const deadline = Date.now() + 30_000
  while (values.length < count && Date.now() < deadline) {
    for (const batch of await consumer.poll(1000)) for (const r of batch.records) values.push(r.value!.toString())
  }
  return values
}

async function rejection(p: Promise<unknown>): Promise<KafkaClientError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(KafkaClientError)
  return err as KafkaClientError
}

describe('ferrolog client and CLI against Apache Kafka over SASL_SSL', () => {
  it.each(MECHANISMS)(
    '%s: the CLI creates a topic (--command-config) and produces (-X), a Consumer group and the CLI read it back',
    async (mechanism) => {
      const topic = `sasl-${mechanism.toLowerCase()}`
      const created = await ferrolog(['topics', '--bootstrap-server', bootstrap, '--command-config', commandConfig(mechanism), 'create', '--topic', topic, '--partitions', '2'])
      expect(created.stderr).toBe('')
      expect(created.stdout).toContain(`Created topic ${topic}.`)
      const lines = Array.from({ length: 6 }, (_, i) => `k${i}:${mechanism}-${i}`)
      const produced = await ferrolog(['produce', '--bootstrap-server', bootstrap, '--topic', topic, '--key-separator', ':', ...dashX(mechanism)], lines.join('\n') + '\n')
      expect(produced.stderr).toBe('')
      expect(produced.status).toBe(0)

      const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: `g-${topic}`, 'auto.offset.reset': 'earliest', ...saslConfig(mechanism) })
      try {
        consumer.subscribe(topic)
        const values = await pollValues(consumer, 6)
        expect(values.sort()).toEqual(lines.map((l) => l.split(':')[1]).sort())
      } finally {
        await consumer.close()
      }
      const consumed = await ferrolog(['consume', '--bootstrap-server', bootstrap, '--topic', topic, '--offset', 'earliest', '--exit-at-end', '--command-config', commandConfig(mechanism)])
      expect(consumed.status).toBe(0)
      expect(consumed.stdout.trim().split('\n').sort()).toEqual(lines.map((l) => l.split(':')[1]).sort())
    },
    90_000,
  )

  it.each(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const)(
    '%s: a wrong password and an unknown user fail with SASL_AUTHENTICATION_FAILED, not retried, the password in no message',
    async (mechanism) => {
      const wrong = 'not-The-Password-99'
      for (const user of ['admin', 'nobody']) {
        const consumer = new Consumer({ bootstrapServers: bootstrap, ...saslConfig(mechanism, user, wrong) })
        try {
          consumer.assign([{ topic: 'sasl-plain', partition: 0 }])
          const err = await rejection(consumer.poll(5000))
          expect(err.code).toBe('SASL_AUTHENTICATION_FAILED')
          expect(err.retriable).toBe(false)
          expect(err.message).not.toContain(wrong)
        } finally {
          await consumer.close()
        }
      }
      const cli = await ferrolog(['topics', '--bootstrap-server', bootstrap, ...dashX(mechanism, wrong), 'list'])
      expect(cli.status).toBe(1)
      expect(cli.stderr).toContain('SASL_AUTHENTICATION_FAILED')
      expect(cli.stderr + cli.stdout).not.toContain(wrong)
    },
    60_000,
  )

  it('a CA that did not sign the broker certificate: SSL_HANDSHAKE_FAILED, not retried', async () => {
    const otherCa = join(dir, 'other-ca.pem')
    writeFileSync(otherCa, createCertificateAuthority({ commonName: 'another CA' }).certificatePem)
    const client = new NetworkClient({ bootstrapServers: bootstrap, security: clientSecurityFrom({ ...saslConfig('PLAIN'), 'ssl.ca.location': otherCa }) })
    try {
      const err = await rejection(client.refreshMetadata(null))
      expect(err.code).toBe('SSL_HANDSHAKE_FAILED')
      expect(err.retriable).toBe(false)
    } finally {
      await client.close()
    }
    const cli = await ferrolog(['topics', '--bootstrap-server', bootstrap, ...dashX('PLAIN'), '-X', `ssl.ca.location=${otherCa}`, 'list'])
    expect(cli.status).toBe(1)
    expect(cli.stderr).toContain('TLS handshake')
  }, 60_000)

  it('alice, authenticated but without ACLs, gets TOPIC_AUTHORIZATION_FAILED; reads once kafka-acls.sh grants READ', async () => {
    const topic = 'sasl-acl'
    expect((await ferrolog(['topics', '--bootstrap-server', bootstrap, '--command-config', commandConfig('SCRAM-SHA-512'), 'create', '--topic', topic])).status).toBe(0)
    const produced = await ferrolog(['produce', '--bootstrap-server', bootstrap, '--topic', topic, ...dashX('SCRAM-SHA-512')], 'one\ntwo\n')
    expect(produced.status).toBe(0)
    const alice = () => new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'earliest', ...saslConfig('PLAIN', 'alice', ALICE_PASSWORD) })
    const refused = alice()
    try {
      refused.assign([{ topic, partition: 0 }])
      expect((await rejection(refused.poll(5000))).code).toBe('TOPIC_AUTHORIZATION_FAILED')
    } finally {
      await refused.close()
    }
    await kafkaToolOk(kafka.plaintextPort, KafkaTool.ACLS, ['--add', '--allow-principal', 'User:alice', '--operation', 'Read', '--topic', topic])
    const allowed = alice()
    try {
      allowed.assign([{ topic, partition: 0 }])
      // ACLs reach the broker's authorizer through the metadata log: a moment after the tool returns.
      const deadline = Date.now() + 20_000
      let values: string[] = []
      while (values.length < 2) {
        try {
          values = await pollValues(allowed, 2)
        } catch (err) {
          if ((err as KafkaClientError).code !== 'TOPIC_AUTHORIZATION_FAILED' || Date.now() > deadline) throw err
          await new Promise((r) => setTimeout(r, 200))
        }
      }
      expect(values).toEqual(['one', 'two'])
    } finally {
      await allowed.close()
    }
  }, 90_000)

  it('KIP-368: a SCRAM-SHA-256 connection outliving its 3 s session re-authenticates in place; no request on it fails', async () => {
    const client = new NetworkClient({ bootstrapServers: bootstrap, security: clientSecurityFrom(saslConfig('SCRAM-SHA-256')) })
    try {
      const node = client.bootstrapNodes[0].nodeId
      const first = (await client.ready(node)).connection
      const deadline = Date.now() + 30_000
      let requests = 0
      while (client.reauthentications < 2 && Date.now() < deadline) {
        const res = await client.request(node, metadataCodec, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })
        expect(res.brokers.length).toBe(1)
        requests++
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(client.reauthentications).toBeGreaterThanOrEqual(2)
      expect((await client.ready(node)).connection).toBe(first)
      expect(requests).toBeGreaterThan(10)
    } finally {
      await client.close()
    }
  }, 60_000)

  it('kafkajs (PLAIN, SCRAM-SHA-512) and @platformatic/kafka (SCRAM-SHA-512, OAUTHBEARER) write over the same listener; ferrolog reads it all', async () => {
    const topic = 'sasl-interop'
    expect((await ferrolog(['topics', '--bootstrap-server', bootstrap, '--command-config', commandConfig('PLAIN'), 'create', '--topic', topic])).status).toBe(0)
    const ca = [(await import('node:fs')).readFileSync(kafka.caFile, 'utf8')]
    for (const mechanism of ['plain', 'scram-sha-512'] as const) {
      const kafkajs = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING, ssl: { ca }, sasl: { mechanism, username: 'admin', password: ADMIN_PASSWORD } })
      const producer = kafkajs.producer()
      await producer.connect()
      try {
        await producer.send({ topic, messages: [{ value: `kafkajs-${mechanism}` }] })
      } finally {
        await producer.disconnect()
      }
    }
    const platformatic = [
      { mechanism: 'SCRAM-SHA-512' as const, username: 'admin', password: ADMIN_PASSWORD },
      { mechanism: 'OAUTHBEARER' as const, token: unsecuredJwt({ principal: 'admin' }) },
    ]
    for (const sasl of platformatic) {
      const producer = new PlatformaticProducer({ clientId: 'p', bootstrapBrokers: [bootstrap], serializers: stringSerializers, tls: { ca }, sasl, timeout: 10_000, retries: 2 })
      try {
        await producer.send({ messages: [{ topic, value: `platformatic-${sasl.mechanism}` }] })
      } finally {
        await producer.close()
      }
    }
    const consumed = await ferrolog(['consume', '--bootstrap-server', bootstrap, '--topic', topic, '--offset', 'earliest', '--exit-at-end', ...dashX('SCRAM-SHA-512')])
    expect(consumed.stderr).toBe('')
    expect(consumed.stdout.trim().split('\n')).toEqual(['kafkajs-plain', 'kafkajs-scram-sha-512', 'platformatic-SCRAM-SHA-512', 'platformatic-OAUTHBEARER'])
  }, 90_000)
})
