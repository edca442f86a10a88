/**
 * Issue 26 item 2: TLS on SSL listeners (node:tls) with PEM key and trust stores as Kafka reads
 * them. Real clients over real sockets: kafkajs and @platformatic/kafka produce and consume over
 * SSL (records past the copy path's at-once size, so the TLS path's chunked file reads are
 * used); a client certificate gives the principal through ssl.principal.mapping.rules; a
 * certificate of another CA is refused; a handshake that never finishes is closed; a key store
 * reloaded by AlterConfigs of its location is what a new connection sees; Metadata on each
 * listener names its own port.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { connect as netConnect } from 'node:net'
import { connect as tlsConnect, type TLSSocket } from 'node:tls'
import { join } from 'node:path'
import { Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka'
import { ConfigResourceTypes, Kafka, logLevel, type KafkaConfig } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Logger } from '../../ts/logger.js'
import { createCertificateAuthority, type CertificateAuthority } from '../../ts/security/certificates.js'
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom, ConfigError } from '../../ts/server/config.js'
import { tempDir } from '../helpers/tmp.js'

/** A logger that keeps every line (the principal of a TLS connection is logged at debug). */
function recordingLogger(lines: Array<{ msg: string; fields: Record<string, unknown> }>): Logger {
  const log = (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ msg, fields })
  const logger: Logger = { error: log, warn: log, info: log, debug: log, child: () => logger }
  return logger
}

let ca: CertificateAuthority
let otherCa: CertificateAuthority
let dir: string
let broker: Broker
const lines: Array<{ msg: string; fields: Record<string, unknown> }> = []
const KEY_PASSWORD = 'key-secret'

beforeAll(async () => {
  ca = createCertificateAuthority({ commonName: 'ferrolog test CA' })
  otherCa = createCertificateAuthority({ commonName: 'another CA' })
  // Not tempDir: the files live for every test of the file.
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-tls-'))
  mkdirSync(join(dir, 'certs'))
  const server = ca.issue({ subject: { CN: 'broker' }, keyPassword: KEY_PASSWORD })
  // Kafka's PEM key store file: the (encrypted) private key and the certificate chain together.
  writeFileSync(join(dir, 'certs/broker.pem'), server.keyPem + server.chainPem)
  writeFileSync(join(dir, 'certs/ca.pem'), ca.certificatePem)
  const config = brokerConfigFrom({
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
    'log.dirs': join(dir, 'data'),
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': join(dir, 'certs/broker.pem'),
    'ssl.key.password': KEY_PASSWORD,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': join(dir, 'certs/ca.pem'),
    'listener.name.ssl.ssl.client.auth': 'requested',
    'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=clients.*$/$1/L,DEFAULT',
    'connections.max.idle.ms': '1500',
    'group.initial.rebalance.delay.ms': '0',
  })
  broker = await Broker.start(config, { logger: recordingLogger(lines) })
}, 60_000)

afterAll(async () => {
  await broker?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const sslPort = () => broker.listenerPort('SSL')

function kafkajs(ssl: KafkaConfig['ssl'], port = sslPort()): Kafka {
  return new Kafka({ brokers: [`127.0.0.1:${port}`], clientId: 'tls-test', ssl, logLevel: logLevel.NOTHING, retry: { retries: 2 }, connectionTimeout: 5000 })
}

/** A TLS connection to the SSL listener: resolves once the handshake finished, rejects if it failed. */
function handshake(options: { ca: string; cert?: string; key?: string }): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: sslPort(), servername: 'localhost', ...options }, () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Resolves once the socket closed (the broker closed it), with how long that took. */
function closedWithin(socket: { once(event: 'close', fn: () => void): unknown }): Promise<number> {
  const started = Date.now()
  return new Promise((resolve) => socket.once('close', () => resolve(Date.now() - started)))
}

describe('an SSL listener', () => {
  it('serves kafkajs over TLS (trusting the CA): produce, consume, and Metadata with the SSL port', async () => {
    const kafka = kafkajs({ ca: [ca.certificatePem], servername: 'localhost' })
    const admin = kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic: 'tls-kafkajs', numPartitions: 1 }] })
    const cluster = await admin.describeCluster()
    expect(cluster.brokers.map((b) => b.port)).toEqual([sslPort()])
    await admin.disconnect()
    // Plain clients of the PLAINTEXT listener are told its port.
    const plain = new Kafka({ brokers: [`127.0.0.1:${broker.listenerPort('PLAINTEXT')}`], logLevel: logLevel.NOTHING }).admin()
    await plain.connect()
    expect((await plain.describeCluster()).brokers.map((b) => b.port)).toEqual([broker.listenerPort('PLAINTEXT')])
    await plain.disconnect()

    const producer = kafka.producer()
    await producer.connect()
    // 40 x 20 KiB: a Fetch response larger than the copy path's at-once size.
    const values = Array.from({ length: 40 }, (_, i) => `${i}:`.padEnd(20 * 1024, String.fromCharCode(97 + (i % 26))))
    for (let i = 0; i < values.length; i += 10) await producer.send({ topic: 'tls-kafkajs', messages: values.slice(i, i + 10).map((value) => ({ value })) })
    await producer.disconnect()
    const consumer = kafka.consumer({ groupId: 'tls-kafkajs-group' })
    await consumer.connect()
    await consumer.subscribe({ topic: 'tls-kafkajs', fromBeginning: true })
    const got: string[] = []
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${got.length} of ${values.length}`)), 30_000)
      void consumer.run({
        eachMessage: async ({ message }) => {
          got.push(message.value!.toString())
          if (got.length === values.length) {
            clearTimeout(timer)
            resolve()
          }
        },
      })
    })
    await consumer.disconnect()
    expect(got).toEqual(values)
  }, 60_000)

  it('serves @platformatic/kafka over TLS', async () => {
    const tls = { ca: ca.certificatePem, servername: 'localhost' }
    const producer = new Producer({
      clientId: 'tls-platformatic',
      bootstrapBrokers: [`127.0.0.1:${sslPort()}`],
      serializers: stringSerializers,
      tls,
      autocreateTopics: true,
      timeout: 10_000,
      retries: 3,
    })
    try {
      const sent = await producer.send({ messages: [{ topic: 'tls-platformatic', key: 'k', value: 'over tls' }] })
      expect(sent.offsets).toEqual([{ topic: 'tls-platformatic', partition: 0, offset: 0n }])
    } finally {
      await producer.close().catch(() => undefined)
    }
    const consumer = new Consumer({
      clientId: 'tls-platformatic-c',
      groupId: 'tls-platformatic-g',
      bootstrapBrokers: [`127.0.0.1:${sslPort()}`],
      deserializers: stringDeserializers,
      tls,
      timeout: 10_000,
      retries: 3,
      maxWaitTime: 200,
    })
    try {
      const stream = await consumer.consume({ topics: ['tls-platformatic'], mode: 'earliest', autocommit: false })
      let value: string | undefined
      for await (const message of stream) {
        value = message.value as string
        break
      }
      await stream.close().catch(() => undefined)
      expect(value).toBe('over tls')
    } finally {
      await (consumer.close(true) as unknown as Promise<void>).catch(() => undefined)
    }
  }, 60_000)

  it("gives a client certificate's connection the principal its DN maps to", async () => {
    const alice = ca.issue({ subject: { C: 'US', O: 'Example, Inc', OU: 'clients', CN: 'Alice' }, usage: 'client' })
    const bob = ca.issue({ subject: { O: 'Example', CN: 'bob' }, usage: 'client' })
    for (const [cert, expected] of [
      [alice, 'User:alice'],
      // No rule but DEFAULT applies: the DN as Java's X500Principal.getName() writes it.
      [bob, 'User:CN=bob,O=Example'],
    ] as const) {
      const kafka = kafkajs({ ca: [ca.certificatePem], cert: cert.certificatePem, key: cert.keyPem, servername: 'localhost' })
      const admin = kafka.admin()
      await admin.connect()
      await admin.listTopics()
      await admin.disconnect()
      expect(lines.filter((l) => l.msg === 'TLS connection').map((l) => l.fields.principal)).toContain(expected)
    }
    // Without a certificate (ssl.client.auth=requested): ANONYMOUS.
    expect(lines.filter((l) => l.msg === 'TLS connection').map((l) => l.fields.principal)).toContain('User:ANONYMOUS')
  }, 30_000)

  it('refuses a client certificate of another CA', async () => {
    const mallory = otherCa.issue({ subject: { OU: 'clients', CN: 'mallory' }, usage: 'client' })
    const socket = await handshake({ ca: ca.certificatePem, cert: mallory.certificatePem, key: mallory.keyPem }).catch((err: Error) => err)
    // TLS 1.3: the client's handshake ends before the server checked its certificate; the broker closes it then.
    if (!(socket instanceof Error)) expect(await closedWithin(socket)).toBeLessThan(5000)
    expect(lines.filter((l) => l.msg === 'TLS connection').map((l) => l.fields.principal)).not.toContain('User:mallory')
  })

  it('closes a connection whose handshake never finishes (connections.max.idle.ms)', async () => {
    const socket = netConnect(sslPort(), '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    // Nothing is sent: no ClientHello.
    const ms = await closedWithin(socket)
    expect(ms).toBeGreaterThanOrEqual(1000)
    expect(ms).toBeLessThan(10_000)
  })

  it('reloads its key store when its location is altered again: new connections see the new certificate', async () => {
    const newCa = createCertificateAuthority({ commonName: 'rotated CA' })
    const rotated = newCa.issue({ subject: { CN: 'broker-rotated' }, keyPassword: KEY_PASSWORD })
    const before = await handshake({ ca: ca.certificatePem, servername: 'localhost' } as never)
    expect(before.getPeerCertificate().subject.CN).toBe('broker')
    writeFileSync(join(dir, 'certs/broker.pem'), rotated.keyPem + rotated.chainPem)
    const admin = new Kafka({ brokers: [`127.0.0.1:${broker.listenerPort('PLAINTEXT')}`], logLevel: logLevel.NOTHING }).admin()
    await admin.connect()
    try {
      // A bad key store is refused, and changes nothing.
      await expect(
        admin.alterConfigs({
          validateOnly: false,
          resources: [
            { type: ConfigResourceTypes.BROKER, name: String(broker.config.nodeId), configEntries: [{ name: 'listener.name.ssl.ssl.keystore.location', value: join(dir, 'certs/missing.pem') }] },
          ],
        }),
      ).rejects.toMatchObject({ type: 'INVALID_REQUEST' })
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          { type: ConfigResourceTypes.BROKER, name: String(broker.config.nodeId), configEntries: [{ name: 'listener.name.ssl.ssl.keystore.location', value: join(dir, 'certs/broker.pem') }] },
        ],
      })
    } finally {
      await admin.disconnect()
    }
    const after = await handshake({ ca: newCa.certificatePem, servername: 'localhost' } as never)
    expect(after.getPeerCertificate().subject.CN).toBe('broker-rotated')
    // The connection made before keeps working on its old session.
    expect(before.destroyed).toBe(false)
    before.destroy()
    after.destroy()
    await expect(handshake({ ca: ca.certificatePem, servername: 'localhost' } as never)).rejects.toThrow()
  }, 30_000)
})

describe('SSL settings', () => {
  it('refuse to start without a PEM key store, with a ConfigError naming the listener', async () => {
    const config = brokerConfigFrom({ listeners: 'SSL://127.0.0.1:0', 'log.dirs': tempDir('ferrolog-tls-bad-') })
    await expect(Broker.start(config, { logger: recordingLogger([]) })).rejects.toThrow(ConfigError)
    const jks = brokerConfigFrom({ listeners: 'SSL://127.0.0.1:0', 'log.dirs': tempDir('ferrolog-tls-bad-'), 'ssl.keystore.location': '/x.jks' })
    await expect(Broker.start(jks, { logger: recordingLogger([]) })).rejects.toThrow(/listener SSL: ssl.keystore.type JKS is not supported: use ssl.keystore.type=PEM/)
  })
})
