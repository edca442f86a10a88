/**
 * ferrolog's client and CLI against Apache Kafka 4.4 with an SSL listener requiring client
 * certificates (ssl.client.auth=required; tools/kafka/run-broker.sh, one broker for the file),
 * the StandardAuthorizer with the certificate DN `CN=alice` as super user:
 *
 * - a client certificate (its key encrypted with node:crypto's PBES2, ssl.key.password) from
 *   the broker's CA: the CLI creates and produces, a Consumer reads; kafkajs does the same;
 * - the certificate's DN is the principal: `CN=bob`, also from the CA, is authenticated and then
 *   refused (TOPIC_AUTHORIZATION_FAILED), as Kafka's default principal builder names him;
 * - no client certificate, one from another CA, or a CA that did not sign the broker:
 *   SSL_HANDSHAKE_FAILED, not retried;
 * - Kafka's PEM keystore file (ssl.keystore.location: key and chain in one file) through
 *   --command-config.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { createCertificateAuthority, type CertificateAuthority } from '../../ts/security/certificates.js'
import { startSecuredKafka, stopKafkaBroker, type SecuredKafka } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'

const ROOT = join(__dirname, '../..')
const CLI = join(ROOT, 'dist/ts/cli/main.js')
const ferrolog = (args: string[], input = '') => runProcess(process.execPath, [CLI, ...args], input, 60_000)
const KEY_PASSWORD = 'client-Key-Secret-5'

let dir: string
let ca: CertificateAuthority
let kafka: SecuredKafka
let bootstrap: string

interface ClientFiles {
  cert: string
  key: string
}

/** Writes a client certificate from `authority` for CN=`cn`, its key encrypted with KEY_PASSWORD. */
function clientCertificate(authority: CertificateAuthority, cn: string): ClientFiles {
  const issued = authority.issue({ subject: { CN: cn }, usage: 'client', keyPassword: KEY_PASSWORD })
  const files = { cert: join(dir, `${cn}.pem`), key: join(dir, `${cn}.key`) }
  writeFileSync(files.cert, issued.certificatePem)
  writeFileSync(files.key, issued.keyPem)
  return files
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-ssl-'))
  ca = createCertificateAuthority()
  kafka = await startSecuredKafka(dir, { listener: 'SSL', ca, clientAuth: 'required', superUsers: ['User:CN=alice'] })
  bootstrap = `127.0.0.1:${kafka.securePort}`
}, 150_000)

afterAll(() => {
  if (!dir) return
  stopKafkaBroker(dir)
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

const sslConfig = (files?: ClientFiles, caFile = kafka.caFile): Record<string, unknown> => ({
  'security.protocol': 'SSL',
  'ssl.ca.location': caFile,
  ...(files ? { 'ssl.certificate.location': files.cert, 'ssl.key.location': files.key, 'ssl.key.password': KEY_PASSWORD } : {}),
})

const dashX = (config: Record<string, unknown>): string[] => Object.entries(config).flatMap(([k, v]) => ['-X', `${k}=${String(v)}`])

async function pollValues(consumer: Consumer, count: number): Promise<string[]> {
  const values: string[] = []
  const deadline = Date.now() + 30_000
  while (values.length < count && Date.now() < deadline) {
    for (const batch of await consumer.poll(1000)) for (const r of batch.records) values.push(r.value!.toString())
  }
  return values
}

async function pollError(config: Record<string, unknown>, topic: string): Promise<KafkaClientError> {
  const consumer = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'earliest', ...config })
  try {
    consumer.assign([{ topic, partition: 0 }])
    const err = await consumer.poll(5000).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(KafkaClientError)
    return err as KafkaClientError
  } finally {
    await consumer.close()
  }
}

describe('ferrolog client and CLI against Apache Kafka over SSL with client certificates', () => {
  it('alice (a super user by her certificate DN): the CLI creates and produces, a Consumer and kafkajs read', async () => {
    const alice = clientCertificate(ca, 'alice')
    const topic = 'ssl-alice'
    const created = await ferrolog(['topics', '--bootstrap-server', bootstrap, ...dashX(sslConfig(alice)), 'create', '--topic', topic])
    expect(created.stderr).toBe('')
    const produced = await ferrolog(['produce', '--bootstrap-server', bootstrap, '--topic', topic, ...dashX(sslConfig(alice))], 'a\nb\nc\n')
    expect(produced.status).toBe(0)
    const consumer = new Consumer({ bootstrapServers: bootstrap, groupId: 'ssl-group', 'auto.offset.reset': 'earliest', ...sslConfig(alice) })
    try {
      consumer.subscribe(topic)
      expect(await pollValues(consumer, 3)).toEqual(['a', 'b', 'c'])
    } finally {
      await consumer.close()
    }
    const kafkajs = new Kafka({
      brokers: [bootstrap],
      logLevel: logLevel.NOTHING,
      ssl: { ca: [readFileSync(kafka.caFile, 'utf8')], cert: readFileSync(alice.cert, 'utf8'), key: readFileSync(alice.key, 'utf8'), passphrase: KEY_PASSWORD },
    })
    const admin = kafkajs.admin()
    await admin.connect()
    try {
      const offsets = await admin.fetchTopicOffsets(topic)
      expect(offsets.map((o) => o.high)).toEqual(['3'])
    } finally {
      await admin.disconnect()
    }
  }, 90_000)

  it("Kafka's PEM keystore file (key and chain in one) through --command-config", async () => {
    const issued = ca.issue({ subject: { CN: 'alice' }, usage: 'client', keyPassword: KEY_PASSWORD })
    const keystore = join(dir, 'alice-keystore.pem')
    writeFileSync(keystore, issued.keyPem + issued.chainPem)
    const props = join(dir, 'ssl.properties')
    writeFileSync(
      props,
      [
        'security.protocol=SSL',
        'ssl.truststore.type=PEM',
        `ssl.truststore.location=${kafka.caFile}`,
        'ssl.keystore.type=PEM',
        `ssl.keystore.location=${keystore}`,
        `ssl.key.password=${KEY_PASSWORD}`,
      ].join('\n'),
    )
    const listed = await ferrolog(['topics', '--bootstrap-server', bootstrap, '--command-config', props, 'list'])
    expect(listed.stderr).toBe('')
    expect(listed.stdout).toContain('ssl-alice')
  }, 60_000)

  it("bob's certificate is from the CA, so he is authenticated, and as User:CN=bob he is refused the topic", async () => {
    const err = await pollError(sslConfig(clientCertificate(ca, 'bob')), 'ssl-alice')
    expect(err.code).toBe('TOPIC_AUTHORIZATION_FAILED')
  }, 60_000)

  it('no client certificate, one from another CA, or a CA that did not sign the broker: SSL_HANDSHAKE_FAILED, not retried', async () => {
    const other = createCertificateAuthority({ commonName: 'another CA' })
    const otherCaFile = join(dir, 'other-ca.pem')
    writeFileSync(otherCaFile, other.certificatePem)
    // (each certificate in its own files: they are all written before the first poll)
    for (const config of [sslConfig(), sslConfig(clientCertificate(other, 'mallory')), sslConfig(clientCertificate(ca, 'carol'), otherCaFile)]) {
      const err = await pollError(config, 'ssl-alice')
      expect(err.code).toBe('SSL_HANDSHAKE_FAILED')
      expect(err.retriable).toBe(false)
      expect(err.message).not.toContain(KEY_PASSWORD)
    }
    const cli = await ferrolog(['topics', '--bootstrap-server', bootstrap, ...dashX(sslConfig()), 'list'])
    expect(cli.status).toBe(1)
    expect(cli.stderr).toMatch(/TLS/)
  }, 60_000)

  it('a wrong ssl.key.password: SSL_HANDSHAKE_FAILED naming the client key, not the password', async () => {
    const err = await pollError({ ...sslConfig(clientCertificate(ca, 'alice')), 'ssl.key.password': 'not-it-at-all' }, 'ssl-alice')
    expect(err.code).toBe('SSL_HANDSHAKE_FAILED')
    expect(err.message).toContain('client certificate or key')
    expect(err.message).not.toContain('not-it-at-all')
  }, 60_000)
})
