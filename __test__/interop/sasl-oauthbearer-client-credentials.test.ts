/**
 * SASL/OAUTHBEARER with tokens from an OAuth server by the client credentials grant (KIP-768),
 * a token endpoint and JWKS on 127.0.0.1 (helpers/oauth-server.ts), against ferrolog and Apache
 * Kafka 4.4 with the same server.properties (the JWKS validator; connections.max.reauth.ms set,
 * so a session ends with its token, KIP-368):
 *
 * - ferrolog's Producer (Kafka's names: OAuthBearerLoginCallbackHandler, JAAS clientId and
 *   clientSecret) and Consumer (librdkafka's: sasl.oauthbearer.method=oidc) produce and consume;
 * - a wrong secret: the endpoint answers 401, the client fails with SASL_AUTHENTICATION_FAILED,
 *   not retriable, its message naming the endpoint's answer and no secret;
 * - a token living 12 s is refreshed before it expires and the connection re-authenticates in
 *   place with the new one (the same connection answers after the first token expired);
 * - ferrolog's CLI: `produce` with -X (librdkafka's names), `consume` with --command-config
 *   (Kafka's), with the same secret kept out of every line it prints;
 * - Kafka's Java console producer and consumer with OAuthBearerLoginCallbackHandler (the JVM
 *   told the URLs by org.apache.kafka.sasl.oauthbearer.allowed.urls) write and read through both.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Admin } from '../../ts/client/admin.js'
import { clientSecurityFrom, closeClientSecurity } from '../../ts/client/client-security.js'
import { Consumer } from '../../ts/client/consumer.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { Producer } from '../../ts/client/producer.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { fetchKafkaJars, runKafkaTool } from '../helpers/kafka-tools.js'
import { AUDIENCE, ISSUER, startOAuthServer, type OAuthServer } from '../helpers/oauth-server.js'
import { ALLOWED_URLS, allowUrlsInJvms, JWKS_HANDLER, LOGIN_HANDLER, LOGIN_MODULE, startFerrolog, startKafka, type Target } from '../helpers/oauthbearer-targets.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')
const SECRETS = { app: 'app-Secret-31', reader: 'reader-Secret-47', short: 'short-Secret-59', java: 'java-Secret-73' }

let oauth: OAuthServer
const targets: Target[] = []
let restoreJavaOptions = () => {}

/** Kafka's client settings for the client credentials login as `id`. */
function kafkaStyle(id: keyof typeof SECRETS, secret: string = SECRETS[id]): Record<string, string> {
  return {
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism': 'OAUTHBEARER',
    'sasl.login.callback.handler.class': LOGIN_HANDLER,
    'sasl.oauthbearer.token.endpoint.url': oauth.tokenUrl,
    'sasl.jaas.config': `${LOGIN_MODULE} required clientId="${id}" clientSecret="${secret}" scope="kafka";`,
    [ALLOWED_URLS]: oauth.tokenUrl,
  }
}

/** librdkafka's settings for the same. */
function rdkafkaStyle(id: keyof typeof SECRETS): Record<string, string> {
  return {
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanisms': 'OAUTHBEARER',
    'sasl.oauthbearer.method': 'oidc',
    'sasl.oauthbearer.client.id': id,
    'sasl.oauthbearer.client.secret': SECRETS[id],
    'sasl.oauthbearer.token.endpoint.url': oauth.tokenUrl,
    'sasl.oauthbearer.scope': 'kafka',
  }
}

beforeAll(async () => {
  fetchKafkaJars()
  oauth = await startOAuthServer(SECRETS)
  const props = {
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': `${LOGIN_MODULE} required;`,
    'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': JWKS_HANDLER,
    'listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms': '600000',
    'sasl.oauthbearer.jwks.endpoint.url': oauth.jwksUrl,
    'sasl.oauthbearer.expected.issuer': ISSUER,
    'sasl.oauthbearer.expected.audience': AUDIENCE,
  }
  targets.push(await startFerrolog({ ...props, [ALLOWED_URLS]: oauth.jwksUrl }))
  // Kafka's JVMs (the broker and the console tools) read the allowed URLs from a system property.
  restoreJavaOptions = allowUrlsInJvms([oauth.jwksUrl, oauth.tokenUrl])
  targets.push(await startKafka(props))
}, 180_000)

afterAll(async () => {
  restoreJavaOptions()
  for (const t of targets) await t.stop().catch(() => undefined)
  oauth?.close()
}, 90_000)

async function produceConsume(port: number, topic: string): Promise<string[]> {
  const bootstrapServers = `127.0.0.1:${port}`
  const admin = new Admin({ bootstrapServers, ...kafkaStyle('app') })
  try {
    await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]).all()
  } finally {
    await admin.close()
  }
  const producer = new Producer({ bootstrapServers, ...kafkaStyle('app') })
  try {
    await Promise.all([producer.send({ topic, value: 'one' }), producer.send({ topic, value: 'two' })])
  } finally {
    await producer.close()
  }
  const consumer = new Consumer({ bootstrapServers, groupId: `g-${topic}`, 'auto.offset.reset': 'earliest', ...rdkafkaStyle('reader') })
  try {
    consumer.subscribe([topic])
    const values: string[] = []
    const deadline = Date.now() + 60_000
    while (values.length < 2 && Date.now() < deadline) for (const b of await consumer.poll(500)) for (const r of b.records) values.push(r.value!.toString())
    return values
  } finally {
    await consumer.close()
  }
}

describe('OAUTHBEARER client credentials: ferrolog clients and Kafka tools against ferrolog and Apache Kafka 4.4', () => {
  it('Producer (Kafka settings) and Consumer (librdkafka settings) produce and consume with tokens from the endpoint', async () => {
    const read: Record<string, string[]> = {}
    for (const t of targets) read[t.name] = await produceConsume(t.port, 'oidc-t')
    expect(read.ferrolog).toEqual(['one', 'two'])
    expect(read.kafka).toEqual(read.ferrolog)
    const asked = oauth.requests.filter((r) => r.ok)
    expect(new Set(asked.map((r) => r.clientId))).toEqual(new Set(['app', 'reader']))
    expect(asked.every((r) => r.scope === 'kafka')).toBe(true)
  }, 180_000)

  it('a wrong secret: the endpoint answers 401 and the client fails with SASL_AUTHENTICATION_FAILED naming no secret', async () => {
    const wrong = 'not-the-Secret-88'
    for (const t of targets) {
      const before = oauth.requests.length
      const producer = new Producer({ bootstrapServers: `127.0.0.1:${t.port}`, ...kafkaStyle('app', wrong) })
      try {
        const err = await producer.send({ topic: 'oidc-t', value: 'x' }).then(
          () => null,
          (e: unknown) => e,
        )
        expect(err, t.name).toBeInstanceOf(KafkaClientError)
        const e = err as KafkaClientError
        expect(e.code).toBe('SASL_AUTHENTICATION_FAILED')
        expect(e.retriable).toBe(false)
        expect(e.message).toContain(`the token endpoint ${oauth.tokenUrl} answered HTTP 401 {invalid_client - Client authentication failed}`)
        expect(e.message).not.toContain(wrong)
        expect(e.message).not.toContain(SECRETS.app)
      } finally {
        await producer.close({ timeoutMs: 0 })
      }
      // 401 is not retried: the first attempt was the only one for that authentication.
      expect(oauth.requests.slice(before).filter((r) => !r.ok).length).toBeGreaterThanOrEqual(1)
      expect(oauth.requests.slice(before).every((r) => !r.ok)).toBe(true)
    }
  }, 120_000)

  it('a token living 12 s is refreshed before it expires and the connection re-authenticates in place with the new one', async () => {
    oauth.lifetimeSeconds = 12
    try {
      for (const t of targets) {
        oauth.issued.delete('short')
        // Refreshed at 50-55% of its life, well before the re-authentication at 85-95% of the session.
        const security = clientSecurityFrom({ ...rdkafkaStyle('short'), 'sasl.login.refresh.window.factor': '0.5' })
        const client = new NetworkClient({ bootstrapServers: `127.0.0.1:${t.port}`, security })
        try {
          const node = client.bootstrapNodes[0]!.nodeId
          const first = (await client.ready(node)).connection
          const firstExpMs = oauth.issued.get('short')![0]! * 1000
          const deadline = Date.now() + 60_000
          // Requests keep the connection busy until the first token has expired and a second was used.
          while ((Date.now() < firstExpMs + 1000 || client.reauthentications < 1) && Date.now() < deadline) {
            const res = await client.request(node, metadataCodec, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })
            expect(res.brokers.length).toBe(1)
            await new Promise((r) => setTimeout(r, 200))
          }
          expect(Date.now(), t.name).toBeGreaterThan(firstExpMs)
          expect(client.reauthentications, t.name).toBeGreaterThanOrEqual(1)
          expect(oauth.issued.get('short')!.length, t.name).toBeGreaterThanOrEqual(2)
          // The same connection, authenticated with the refreshed token, answers past the first one's expiry.
          expect((await client.ready(node)).connection, t.name).toBe(first)
        } finally {
          await client.close()
          closeClientSecurity(security)
        }
      }
    } finally {
      oauth.lifetimeSeconds = 3600
    }
  }, 180_000)

  it("ferrolog's CLI: produce with -X (librdkafka's names), consume with --command-config (Kafka's)", async () => {
    const dir = tempDir('oidc-cli-')
    const config = join(dir, 'client.properties')
    writeFileSync(
      config,
      Object.entries(kafkaStyle('app'))
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
    )
    const dashX = Object.entries(rdkafkaStyle('reader')).flatMap(([k, v]) => ['-X', `${k}=${v}`])
    const read: Record<string, string[]> = {}
    for (const t of targets) {
      const bootstrap = `127.0.0.1:${t.port}`
      const topic = 'oidc-cli'
      const created = await runProcess(process.execPath, [CLI, 'topics', '--bootstrap-server', bootstrap, '--command-config', config, 'create', '--topic', topic], '', 60_000)
      expect(created.status, created.stderr).toBe(0)
      const produced = await runProcess(process.execPath, [CLI, 'produce', '--bootstrap-server', bootstrap, '--topic', topic, ...dashX], 'cli-one\ncli-two\n', 60_000)
      expect(produced.stderr).toBe('')
      expect(produced.status).toBe(0)
      const consumed = await runProcess(
        process.execPath,
        [CLI, 'consume', '--bootstrap-server', bootstrap, '--topic', topic, '--offset', 'earliest', '--exit-at-end', '--command-config', config],
        '',
        60_000,
      )
      expect(consumed.status, consumed.stderr).toBe(0)
      read[t.name] = consumed.stdout.trim().split('\n')
      for (const out of [created, produced, consumed]) expect(out.stdout + out.stderr).not.toContain(SECRETS.app)
    }
    expect(read.ferrolog).toEqual(['cli-one', 'cli-two'])
    expect(read.kafka).toEqual(read.ferrolog)
  }, 180_000)

  it("Kafka's Java console producer and consumer with OAuthBearerLoginCallbackHandler write and read through both", async () => {
    const dir = tempDir('oidc-client-')
    const config = join(dir, 'client.properties')
    writeFileSync(
      config,
      [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=OAUTHBEARER',
        `sasl.login.callback.handler.class=${LOGIN_HANDLER}`,
        `sasl.oauthbearer.token.endpoint.url=${oauth.tokenUrl}`,
        `sasl.jaas.config=${LOGIN_MODULE} required clientId="java" clientSecret="${SECRETS.java}" scope="kafka";`,
      ].join('\n'),
    )
    const read: Record<string, string[]> = {}
    for (const t of targets) {
      const topic = 'oidc-java'
      const admin = new Admin({ bootstrapServers: `127.0.0.1:${t.port}`, ...kafkaStyle('app') })
      try {
        await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]).all()
      } finally {
        await admin.close()
      }
      const produced = await runKafkaTool(t.port, 'org.apache.kafka.tools.ConsoleProducer', ['--topic', topic, '--command-config', config], 'alpha\nbeta\n')
      expect(produced.status, `${t.name}: ${produced.stderr}`).toBe(0)
      const r = await runKafkaTool(t.port, 'org.apache.kafka.tools.consumer.ConsoleConsumer', [
        '--topic',
        topic,
        '--from-beginning',
        '--max-messages',
        '2',
        '--timeout-ms',
        '30000',
        '--command-config',
        config,
      ])
      read[t.name] = r.stdout.trim().split('\n')
    }
    expect(read.ferrolog).toEqual(['alpha', 'beta'])
    expect(read.kafka).toEqual(read.ferrolog)
    expect(oauth.requests.some((r) => r.clientId === 'java' && r.ok && r.scope === 'kafka')).toBe(true)
  }, 180_000)
})
