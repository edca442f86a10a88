/**
 * Issue 26 item 2 with Kafka's own Java clients: the console producer and consumer over SSL with
 * a client.properties (PEM key and trust stores, a client certificate under
 * ssl.client.auth=required), against a ferrolog broker and against Apache Kafka 4.4 configured
 * the same way (the same PEM files, the same ssl.* settings): the same records come back, and
 * ferrolog's connection gets the principal the certificate's DN maps to.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Logger } from '../../ts/logger.js'
import { createCertificateAuthority } from '../../ts/security/certificates.js'
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { freePorts } from '../helpers/etcd.js'
import { fetchKafkaJars, runKafkaBroker, runKafkaTool, stopKafkaBroker } from '../helpers/kafka-tools.js'

const KEY_PASSWORD = 'key-secret'
let dir: string
const lines: Array<{ msg: string; fields: Record<string, unknown> }> = []
const logger: Logger = {
  error: (msg, fields = {}) => void lines.push({ msg, fields }),
  warn: (msg, fields = {}) => void lines.push({ msg, fields }),
  info: (msg, fields = {}) => void lines.push({ msg, fields }),
  debug: (msg, fields = {}) => void lines.push({ msg, fields }),
  child: () => logger,
}

/** The broker side's ssl.* settings, the same for ferrolog and Kafka. */
let brokerSsl: Record<string, string>

beforeAll(() => {
  fetchKafkaJars()
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-tls-java-'))
  const ca = createCertificateAuthority()
  // Keys encrypted as Java 17 reads them (PBES2 it cannot: certificates.ts keyEncryption).
  const server = ca.issue({ subject: { CN: 'broker' }, keyPassword: KEY_PASSWORD, keyEncryption: 'pbe-sha1-3des' })
  const client = ca.issue({ subject: { O: 'Example', OU: 'clients', CN: 'Carol' }, usage: 'client', keyPassword: KEY_PASSWORD, keyEncryption: 'pbe-sha1-3des' })
  writeFileSync(join(dir, 'broker.pem'), server.keyPem + server.chainPem)
  writeFileSync(join(dir, 'client.pem'), client.keyPem + client.chainPem)
  writeFileSync(join(dir, 'ca.pem'), ca.certificatePem)
  writeFileSync(
    join(dir, 'client.properties'),
    [
      'security.protocol=SSL',
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${join(dir, 'ca.pem')}`,
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${join(dir, 'client.pem')}`,
      `ssl.key.password=${KEY_PASSWORD}`,
      '',
    ].join('\n'),
  )
  brokerSsl = {
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': join(dir, 'broker.pem'),
    'ssl.key.password': KEY_PASSWORD,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': join(dir, 'ca.pem'),
    'ssl.client.auth': 'required',
    'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=clients.*$/$1/L,DEFAULT',
  }
}, 300_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Produces three records with the console producer, then reads them with the console consumer. */
async function roundTrip(port: number, topic: string): Promise<string[]> {
  const config = join(dir, 'client.properties')
  const produced = await runKafkaTool(port, 'org.apache.kafka.tools.ConsoleProducer', ['--topic', topic, '--command-config', config], 'one\ntwo\nthree\n')
  expect(produced.status, produced.stderr).toBe(0)
  const consumed = await runKafkaTool(port, 'org.apache.kafka.tools.consumer.ConsoleConsumer', [
    '--topic',
    topic,
    '--from-beginning',
    '--max-messages',
    '3',
    '--timeout-ms',
    '30000',
    '--command-config',
    config,
  ])
  expect(consumed.status, consumed.stderr).toBe(0)
  return consumed.stdout.trim().split('\n')
}

describe("Kafka's console producer and consumer over SSL with a client certificate", () => {
  it('round-trip through ferrolog and through Apache Kafka 4.4 with the same settings', async () => {
    const broker = await Broker.start(brokerConfigFrom({ listeners: 'SSL://127.0.0.1:0', 'log.dirs': join(dir, 'data'), ...brokerSsl }), { logger })
    try {
      expect(await roundTrip(broker.listenerPort('SSL'), 'java-tls')).toEqual(['one', 'two', 'three'])
      expect(lines.filter((l) => l.msg === 'TLS connection').map((l) => l.fields.principal)).toContain('User:carol')
      expect(lines.some((l) => l.msg === 'TLS connection' && l.fields.principal === 'User:ANONYMOUS')).toBe(false)
    } finally {
      await broker.stop()
    }

    const kafkaDir = join(dir, 'kafka')
    const [port, controller] = await freePorts(2)
    try {
      await runKafkaBroker(kafkaDir, [
        '--port',
        String(port),
        '--controller-port',
        String(controller),
        '--set',
        `listeners=SSL://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}`,
        '--set',
        `advertised.listeners=SSL://127.0.0.1:${port}`,
        '--set',
        'listener.security.protocol.map=SSL:SSL,CONTROLLER:PLAINTEXT',
        '--set',
        'inter.broker.listener.name=SSL',
        '--set',
        'auto.create.topics.enable=true',
        ...Object.entries(brokerSsl).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
      ])
      expect(await roundTrip(port, 'java-tls')).toEqual(['one', 'two', 'three'])
    } finally {
      stopKafkaBroker(kafkaDir)
    }
  }, 300_000)
})
