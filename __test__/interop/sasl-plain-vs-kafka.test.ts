/**
 * SASL/PLAIN on the wire, the same scenarios against ferrolog and against Apache Kafka 4.4
 * (tools/kafka/run-broker.sh with a SASL_PLAINTEXT listener and PLAIN users), same outcomes:
 * a request before authentication closes the connection unanswered (before and after ApiVersions);
 * a second ApiVersions likewise; a mechanism not enabled gets UNSUPPORTED_SASL_MECHANISM with the
 * enabled list, then the close; a wrong password, an unknown user, a foreign authorization id get
 * SASL_AUTHENTICATION_FAILED with Kafka's message, then the close; success (SaslAuthenticate v0,
 * v1, v2) serves requests, and SaslHandshake/SaslAuthenticate after it get ILLEGAL_SASL_STATE;
 * SaslHandshake v0 takes raw tokens (an empty frame answers success; a failure closes unanswered);
 * truncated and oversized frames during authentication close the connection unanswered.
 * Then Kafka's own console producer and consumer and kcat, with PLAIN, against both.
 */
import { createServer } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { writeRequestHeader } from '../../ts/protocol/header.js'
import { Writer } from '../../ts/protocol/writer.js'
import { fetchKafkaJars, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'
import { startSaslBroker, type SaslBroker } from '../helpers/sasl-broker.js'
import { plainToken, SaslWire } from '../helpers/sasl-wire.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'

let ferrolog: SaslBroker
let kafkaPort = 0
let kafkaDir = ''
let ferrologDir = ''

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      const port = typeof a === 'object' && a ? a.port : 0
      s.close(() => resolve(port))
    })
  })
}

beforeAll(async () => {
  fetchKafkaJars()
  kafkaDir = mkdtempSync(join(tmpdir(), 'kafka-sasl-'))
  const [port, controllerPort] = [await freePort(), await freePort()]
  await runKafkaBroker(kafkaDir, [
    '--port',
    String(port),
    '--controller-port',
    String(controllerPort),
    '--set',
    `listeners=SASL_PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    '--set',
    `advertised.listeners=SASL_PLAINTEXT://127.0.0.1:${port}`,
    '--set',
    'listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
    '--set',
    'inter.broker.listener.name=SASL_PLAINTEXT',
    '--set',
    'sasl.enabled.mechanisms=PLAIN',
    '--set',
    'sasl.mechanism.inter.broker.protocol=PLAIN',
    '--set',
    `listener.name.sasl_plaintext.plain.sasl.jaas.config=${JAAS}`,
    '--set',
    'auto.create.topics.enable=true',
  ])
  kafkaPort = port
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-sasl-'))
  ferrolog = await startSaslBroker({ 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS }, { dataDir: ferrologDir })
}, 180_000)

afterAll(async () => {
  // Kafka is stopped whatever happens to ferrolog's stop: no JVM outlives the test.
  try {
    await ferrolog?.stop()
  } finally {
    if (ferrologDir) rmSync(ferrologDir, { recursive: true, force: true })
    if (kafkaDir) {
      stopKafkaBroker(kafkaDir)
      rmSync(kafkaDir, { recursive: true, force: true })
    }
  }
}, 60_000)

const METADATA = { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }
const API_VERSIONS = { clientSoftwareName: 'sasl-test', clientSoftwareVersion: '1' }

/** One scenario on a fresh connection to `port`: what came back, in order, and whether the broker closed. */
type Scenario = (wire: SaslWire) => Promise<unknown[]>

async function run(port: number, scenario: Scenario): Promise<{ steps: unknown[]; closed: boolean }> {
  const wire = await SaslWire.open(port)
  try {
    const steps = await scenario(wire)
    // Whether the broker closes: a last frame or the close, within 5 s (Kafka closes after its 100 ms delay).
    const closed = await Promise.race([wire.closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000))])
    return { steps, closed }
  } finally {
    wire.close()
  }
}

async function both(scenario: Scenario): Promise<{ ferrolog: { steps: unknown[]; closed: boolean }; kafka: { steps: unknown[]; closed: boolean } }> {
  const [a, b] = await Promise.all([run(ferrolog.port, scenario), run(kafkaPort, scenario)])
  return { ferrolog: a, kafka: b }
}

const errorOf = (r: { errorCode: number } | null) => (r === null ? 'closed' : r.errorCode)

describe('SASL/PLAIN on the wire: ferrolog and Kafka 4.4 answer alike', () => {
  it('a request before authentication closes the connection, unanswered, before and after ApiVersions; so does a second ApiVersions', async () => {
    const first = await both(async (w) => [await w.request(metadataCodec, 12, METADATA)])
    expect(first.ferrolog).toEqual({ steps: [null], closed: true })
    expect(first.ferrolog).toEqual(first.kafka)
    const afterVersions = await both(async (w) => [errorOf(await w.request(apiVersionsCodec, 3, API_VERSIONS)), await w.request(metadataCodec, 12, METADATA)])
    expect(afterVersions.ferrolog).toEqual({ steps: [0, null], closed: true })
    expect(afterVersions.ferrolog).toEqual(afterVersions.kafka)
    const twice = await both(async (w) => [errorOf(await w.request(apiVersionsCodec, 3, API_VERSIONS)), errorOf(await w.request(apiVersionsCodec, 3, API_VERSIONS))])
    expect(twice.ferrolog).toEqual({ steps: [0, 'closed'], closed: true })
    expect(twice.ferrolog).toEqual(twice.kafka)
  }, 60_000)

  it('after SaslHandshake v1, anything but SaslAuthenticate fails the authentication: ApiVersions and SaslHandshake answered ILLEGAL_SASL_STATE, Metadata unanswered, then the close', async () => {
    const versions = await both(async (w) => [errorOf(await w.handshake('PLAIN')), errorOf(await w.request(apiVersionsCodec, 3, API_VERSIONS))])
    expect(versions.ferrolog).toEqual({ steps: [0, 34], closed: true })
    expect(versions.ferrolog).toEqual(versions.kafka)
    const handshake = await both(async (w) => [errorOf(await w.handshake('PLAIN')), await w.handshake('PLAIN')])
    expect(handshake.ferrolog).toEqual({ steps: [0, { errorCode: 34, mechanisms: [] }], closed: true })
    expect(handshake.ferrolog).toEqual(handshake.kafka)
    const metadata = await both(async (w) => [errorOf(await w.handshake('PLAIN')), errorOf(await w.request(metadataCodec, 4, METADATA))])
    expect(metadata.ferrolog.closed).toBe(true)
    expect(metadata.ferrolog.steps[0]).toBe(0)
    // A difference, kept: Kafka first answers the Metadata with its generic error response (a
    // Metadata response without brokers or topics: Metadata has no top-level error code); ferrolog
    // answers only ApiVersions and SaslHandshake so, and closes on the others unanswered. (The
    // generated Metadata decoder gives v4's response the v13 errorCode at its default, 0.)
    expect(metadata.ferrolog.steps[1]).toBe('closed')
    expect(metadata.kafka).toEqual({ steps: [0, 0], closed: true })
  }, 60_000)

  it('a mechanism not enabled: UNSUPPORTED_SASL_MECHANISM with the enabled ones, then the close', async () => {
    const r = await both(async (w) => [await w.handshake('SCRAM-SHA-256')])
    expect(r.ferrolog).toEqual({ steps: [{ errorCode: 33, mechanisms: ['PLAIN'] }], closed: true })
    expect(r.ferrolog).toEqual(r.kafka)
  }, 60_000)

  it("wrong password, unknown user, empty fields, another authorization id: SASL_AUTHENTICATION_FAILED with Kafka's message after the delay, then the close", async () => {
    for (const token of [
      plainToken('alice', 'wrong'),
      plainToken('mallory', 'alice-secret'),
      plainToken('alice', 'alice-secret', 'admin'),
      plainToken('', 'x'),
      plainToken('alice', ''),
      Buffer.from('alice\0alice-secret'),
    ]) {
      for (const version of [0, 1, 2]) {
        const r = await both(async (w) => {
          const handshake = errorOf(await w.handshake('PLAIN'))
          const started = performance.now()
          const auth = await w.authenticate(token, version)
          return [handshake, auth && { errorCode: auth.errorCode, errorMessage: auth.errorMessage, delayed: performance.now() - started >= 90 }]
        })
        expect(r.ferrolog.steps[1], `${JSON.stringify(token.toString())} v${version}`).toMatchObject({ errorCode: 58, delayed: true })
        expect(r.ferrolog, `${JSON.stringify(token.toString())} v${version}`).toEqual(r.kafka)
      }
    }
  }, 120_000)

  it('success on SaslAuthenticate v0, v1, v2 serves requests; SaslHandshake and SaslAuthenticate after it get ILLEGAL_SASL_STATE', async () => {
    for (const version of [0, 1, 2]) {
      const r = await both(async (w) => {
        const versions = errorOf(await w.request(apiVersionsCodec, 3, API_VERSIONS))
        const handshake = await w.handshake('PLAIN')
        const auth = await w.authenticate(plainToken('alice', 'alice-secret'), version)
        const metadata = await w.request(metadataCodec, 12, METADATA)
        const again = await w.authenticate(plainToken('alice', 'alice-secret'), version)
        const handshakeAgain = await w.handshake('PLAIN')
        return [versions, handshake, auth && { ...auth, authBytes: auth.authBytes.length }, metadata !== null, again?.errorCode, again?.errorMessage, handshakeAgain]
      })
      expect(r.ferrolog.steps.slice(0, 2)).toEqual([0, { errorCode: 0, mechanisms: ['PLAIN'] }])
      expect(r.ferrolog.steps[2]).toMatchObject({ errorCode: 0, authBytes: 0, sessionLifetimeMs: 0n })
      expect(r.ferrolog.steps.slice(3)).toEqual([true, 34, 'SaslAuthenticate request received after successful authentication', { errorCode: 34, mechanisms: [] }])
      expect(r.ferrolog, `v${version}`).toEqual(r.kafka)
    }
  }, 60_000)

  it('SaslHandshake v0: raw tokens; success answers an empty frame and serves requests, a failure closes unanswered', async () => {
    const ok = await both(async (w) => {
      const handshake = await w.handshake('PLAIN', 0)
      w.writeFrame(plainToken('alice', 'alice-secret'))
      const answer = await w.nextFrame()
      const metadata = await w.request(metadataCodec, 12, METADATA)
      return [handshake, answer?.length, metadata !== null]
    })
    expect(ok.ferrolog).toEqual({ steps: [{ errorCode: 0, mechanisms: ['PLAIN'] }, 0, true], closed: false })
    expect(ok.ferrolog).toEqual(ok.kafka)
    const bad = await both(async (w) => {
      const handshake = errorOf(await w.handshake('PLAIN', 0))
      w.writeFrame(plainToken('alice', 'nope'))
      return [handshake, await w.nextFrame()]
    })
    expect(bad.ferrolog).toEqual({ steps: [0, null], closed: true })
    expect(bad.ferrolog).toEqual(bad.kafka)
  }, 60_000)

  it('truncated and oversized frames during authentication close the connection unanswered', async () => {
    const truncated = await both(async (w) => {
      const handshake = errorOf(await w.handshake('PLAIN'))
      // A SaslAuthenticate v1 whose authBytes claim 1000 bytes and carry 5.
      const header = new Writer()
      writeRequestHeader(header, { apiKey: 36, apiVersion: 1, correlationId: 9, clientId: 'sasl-wire' }, false)
      const frame = Buffer.from(header.int32(1000).raw(Buffer.from('alice')).finish())
      w.writeFrame(frame)
      return [handshake, await w.nextFrame()]
    })
    expect(truncated.ferrolog).toEqual({ steps: [0, null], closed: true })
    expect(truncated.ferrolog).toEqual(truncated.kafka)
    const oversized = await both(async (w) => {
      const handshake = errorOf(await w.handshake('PLAIN'))
      w.writeFrame(Buffer.alloc(16), 524_289) // over sasl.server.max.receive.size: Kafka reads no further
      return [handshake, await w.nextFrame()]
    })
    expect(oversized.ferrolog).toEqual({ steps: [0, null], closed: true })
    expect(oversized.ferrolog).toEqual(oversized.kafka)
    const negative = await both(async (w) => {
      w.writeFrame(Buffer.alloc(16), -5)
      return [await w.nextFrame()]
    })
    expect(negative.ferrolog).toEqual({ steps: [null], closed: true })
    expect(negative.ferrolog).toEqual(negative.kafka)
  }, 60_000)
})

describe('kafkajs with PLAIN against both brokers', () => {
  it('produces and consumes as alice on both; a wrong password and an unknown user get the same error from both', async () => {
    const outcome = async (port: number) => {
      const client = (username: string, password: string) =>
        new Kafka({ clientId: 'sasl-vs', brokers: [`127.0.0.1:${port}`], sasl: { mechanism: 'plain', username, password }, logLevel: logLevel.NOTHING, retry: { retries: 2 } })
      const alice = client('alice', 'alice-secret')
      const admin = alice.admin()
      await admin.connect()
      await admin.createTopics({ topics: [{ topic: 'kafkajs-sasl', numPartitions: 1 }], waitForLeaders: true })
      const producer = alice.producer()
      await producer.connect()
      await producer.send({ topic: 'kafkajs-sasl', messages: [{ value: 'a' }, { value: 'b' }] })
      await producer.disconnect()
      const consumer = alice.consumer({ groupId: 'kafkajs-sasl', maxWaitTimeInMs: 100 })
      await consumer.connect()
      await consumer.subscribe({ topic: 'kafkajs-sasl', fromBeginning: true })
      const values: string[] = []
      await new Promise<void>((resolve) => void consumer.run({ eachMessage: async ({ message }) => void (values.push(message.value!.toString()), values.length === 2 && resolve()) }))
      await consumer.disconnect()
      await admin.disconnect()
      const refusals: string[] = []
      for (const [u, p] of [
        ['alice', 'wrong'],
        ['mallory', 'x'],
      ]) {
        const a = client(u, p).admin()
        refusals.push(
          await a.connect().then(
            () => 'connected',
            (e: Error) => `${e.name}: ${e.message}`,
          ),
        )
        await a.disconnect()
      }
      return { values, refusals }
    }
    const [mine, theirs] = [await outcome(ferrolog.port), await outcome(kafkaPort)]
    expect(mine.values).toEqual(['a', 'b'])
    expect(mine.refusals[0]).toContain('Authentication failed: Invalid username or password')
    expect(mine).toEqual(theirs)
  }, 120_000)
})

describe("Kafka's console producer and consumer and kcat with SASL_PLAINTEXT and PLAIN", () => {
  it('produce and consume on both brokers; a wrong password fails on both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sasl-client-'))
    try {
      const props = (password: string) => {
        const file = join(dir, `client-${password}.properties`)
        writeFileSync(
          file,
          [
            'security.protocol=SASL_PLAINTEXT',
            'sasl.mechanism=PLAIN',
            `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${password}";`,
          ].join('\n') + '\n',
        )
        return file
      }
      const java = (cls: string, args: string[], input = '') => runKafkaClass(cls, args, input, 90_000)
      for (const port of [ferrolog.port, kafkaPort]) {
        const topic = `console-${port}`
        const produced = await java(
          'org.apache.kafka.tools.ConsoleProducer',
          ['--bootstrap-server', `127.0.0.1:${port}`, '--topic', topic, '--command-config', props('alice-secret')],
          'one\ntwo\nthree\n',
        )
        expect(produced.status, produced.stderr).toBe(0)
        const consumed = await java('org.apache.kafka.tools.consumer.ConsoleConsumer', [
          '--bootstrap-server',
          `127.0.0.1:${port}`,
          '--topic',
          topic,
          '--from-beginning',
          '--max-messages',
          '3',
          '--timeout-ms',
          '20000',
          '--command-config',
          props('alice-secret'),
        ])
        expect(consumed.stdout.trim().split('\n'), consumed.stderr).toEqual(['one', 'two', 'three'])
        const kcat = await runProcess(
          'kcat',
          [
            '-b',
            `127.0.0.1:${port}`,
            '-X',
            'security.protocol=SASL_PLAINTEXT',
            '-X',
            'sasl.mechanisms=PLAIN',
            '-X',
            'sasl.username=alice',
            '-X',
            'sasl.password=alice-secret',
            '-C',
            '-t',
            topic,
            '-o',
            'beginning',
            '-c',
            '3',
            '-e',
          ],
          '',
          30_000,
        )
        expect(kcat.stdout.trim().split('\n'), kcat.stderr).toEqual(['one', 'two', 'three'])
        const refused = await runProcess(
          'kcat',
          ['-b', `127.0.0.1:${port}`, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=PLAIN', '-X', 'sasl.username=alice', '-X', 'sasl.password=wrong', '-L', '-m', '5'],
          '',
          30_000,
        )
        expect(refused.status).not.toBe(0)
        expect(refused.stderr).toContain('Authentication failed: Invalid username or password')
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)
})
