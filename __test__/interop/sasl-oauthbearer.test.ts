/**
 * SASL/OAUTHBEARER end to end, the same server.properties applied to ferrolog and to Apache
 * Kafka 4.4 (tools/kafka/run-broker.sh with a SASL_PLAINTEXT listener), side by side:
 *
 * - Kafka's unsecured validator (the broker default): kafkajs with an oauthBearerProvider of
 *   alg:none tokens produces and consumes, and Kafka's Java console consumer logs in with
 *   OAuthBearerLoginModule's unsecured login (unsecuredLoginStringClaim_sub); an expired token
 *   and one without the required scope are refused on both.
 * - The JWKS validator (OAuthBearerValidatorCallbackHandler, KIP-768) with a JWKS served on
 *   127.0.0.1: an RS256 token of the set is accepted; one signed by another key, one for another
 *   audience and an expired one are refused on both. Kafka reads the JWKS URL only when the JVM
 *   system property org.apache.kafka.sasl.oauthbearer.allowed.urls lists it (set here through
 *   JDK_JAVA_OPTIONS); ferrolog has the broker config of that name.
 */
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { join } from 'node:path'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fetchKafkaJars, runKafkaTool } from '../helpers/kafka-tools.js'
import { ALLOWED_URLS, allowUrlsInJvms, JWKS_HANDLER, LOGIN_MODULE, startFerrolog, startKafka, type Target } from '../helpers/oauthbearer-targets.js'
import { tempDir } from '../helpers/tmp.js'

const CONSOLE_CONSUMER = 'org.apache.kafka.tools.consumer.ConsoleConsumer'

function unsecured(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${part({ alg: 'none' })}.${part(claims)}.`
}

const now = () => Math.floor(Date.now() / 1000)

function client(port: number, token: () => string, retries = 0): Kafka {
  return new Kafka({
    clientId: 'oauth-test',
    brokers: [`127.0.0.1:${port}`],
    sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => Promise.resolve({ value: token() }) },
    logLevel: logLevel.NOTHING,
    retry: { retries },
    connectionTimeout: 5000,
    authenticationTimeout: 5000,
  })
}

/**
 * 'ok' when an admin connects and lists topics with `token`, else 'refused'. (kafkajs takes the
 * JSON error challenge for success and sends Metadata; Kafka answers that request with
 * ILLEGAL_SASL_STATE and closes, kafkajs then says KafkaJSNumberOfRetriesExceeded; ferrolog's SASL
 * authenticator closes without an answer: KafkaJSConnectionClosedError. Refused either way.)
 */
async function attempt(port: number, token: string): Promise<string> {
  const admin = client(port, () => token).admin()
  try {
    await admin.connect()
    await admin.listTopics()
    return 'ok'
  } catch (err) {
    if (process.env.DEBUG_OAUTH) console.log(port, (err as Error).name, (err as Error).message, (err as { originalError?: Error }).originalError?.message)
    return /^KafkaJS/.test((err as Error).name) ? 'refused' : (err as Error).name
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}

/** Produces with kafkajs, consumes what it produced; the values read. */
async function produceConsume(port: number, token: () => string, topic: string): Promise<string[]> {
  // Retries: Kafka answers COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets.
  const kafka = client(port, token, 8)
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: `g-${topic}`, maxWaitTimeInMs: 100 })
  try {
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    await producer.connect()
    await producer.send({ topic, messages: [{ value: 'one' }, { value: 'two' }] })
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    const got: string[] = []
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: ({ message }) => {
          got.push(message.value!.toString())
          if (got.length === 2) resolve()
          return Promise.resolve()
        },
      })
    })
    return got
  } finally {
    await consumer.disconnect().catch(() => undefined)
    await producer.disconnect().catch(() => undefined)
    await admin.disconnect().catch(() => undefined)
  }
}

describe("OAUTHBEARER with Kafka's unsecured validator: ferrolog and Apache Kafka 4.4, same config", () => {
  const props = {
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': `${LOGIN_MODULE} required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorRequiredScope="kafka";`,
  }
  const targets: Target[] = []
  beforeAll(async () => {
    fetchKafkaJars()
    targets.push(await startFerrolog(props), await startKafka(props))
  }, 180_000)
  afterAll(async () => {
    for (const t of targets) await t.stop().catch(() => undefined)
  })

  it('kafkajs produces and consumes with an alg:none token; expired and scope-less tokens are refused alike', async () => {
    const outcomes: Record<string, unknown> = {}
    for (const t of targets) {
      const good = () => unsecured({ sub: 'alice', scope: ['kafka'], iat: now(), exp: now() + 3600 })
      outcomes[t.name] = {
        produced: await produceConsume(t.port, good, 'unsecured-t'),
        expired: await attempt(t.port, unsecured({ sub: 'alice', scope: ['kafka'], iat: now() - 100, exp: now() - 50 })),
        noScope: await attempt(t.port, unsecured({ sub: 'alice', scope: ['other'], iat: now(), exp: now() + 3600 })),
        signed: await attempt(t.port, unsecured({ sub: 'alice', scope: ['kafka'], exp: now() + 3600 }) + 'c2ln'),
      }
    }
    expect(outcomes.ferrolog).toEqual({ produced: ['one', 'two'], expired: 'refused', noScope: 'refused', signed: 'refused' })
    expect(outcomes.ferrolog).toEqual(outcomes.kafka)
  }, 120_000)

  it("Kafka's Java console consumer logs in with OAuthBearerLoginModule's unsecured token", async () => {
    const dir = tempDir('oauth-client-')
    const config = join(dir, 'client.properties')
    writeFileSync(
      config,
      [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=OAUTHBEARER',
        `sasl.jaas.config=${LOGIN_MODULE} required unsecuredLoginStringClaim_sub="alice" unsecuredLoginListClaim_scope=",kafka";`,
      ].join('\n'),
    )
    const read: Record<string, string[]> = {}
    for (const t of targets) {
      const r = await runKafkaTool(t.port, CONSOLE_CONSUMER, ['--topic', 'unsecured-t', '--from-beginning', '--max-messages', '2', '--timeout-ms', '20000', '--command-config', config])
      read[t.name] = r.stdout.trim().split('\n')
      if (process.env.DEBUG_OAUTH)
        console.log(
          t.name,
          r.status,
          r.stdout,
          r.stderr
            .split('\n')
            .filter((l) => /WARN|ERROR|rror/.test(l))
            .slice(0, 15)
            .join('\n'),
        )
    }
    expect(read.ferrolog).toEqual(['one', 'two'])
    expect(read.ferrolog).toEqual(read.kafka)
  }, 120_000)
})

describe('OAUTHBEARER with the JWKS validator (KIP-768) and a JWKS on 127.0.0.1: ferrolog and Apache Kafka 4.4, same config', () => {
  const ISSUER = 'https://idp.test'
  const AUDIENCE = 'kafka'
  let jwksServer: Server
  let keys: JWK[] = []
  let signer: Awaited<ReturnType<typeof generateKeyPair>>
  let stranger: Awaited<ReturnType<typeof generateKeyPair>>
  const targets: Target[] = []
  let restoreJavaOptions = () => {}

  const sign = (key: Awaited<ReturnType<typeof generateKeyPair>>, claims: Record<string, unknown> = {}, exp = now() + 600) =>
    new SignJWT({ sub: 'alice', scope: 'kafka', iss: ISSUER, aud: AUDIENCE, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuedAt(Math.min(now() - 5, exp - 60))
      .setExpirationTime(exp)
      .sign(key.privateKey)

  beforeAll(async () => {
    fetchKafkaJars()
    ;[signer, stranger] = await Promise.all([generateKeyPair('RS256', { extractable: true }), generateKeyPair('RS256', { extractable: true })])
    keys = [{ ...(await exportJWK(signer.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }]
    jwksServer = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys })))
    jwksServer.listen(0, '127.0.0.1')
    await once(jwksServer, 'listening')
    const url = `http://127.0.0.1:${(jwksServer.address() as { port: number }).port}/jwks`
    const props = {
      'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': `${LOGIN_MODULE} required unsecuredLoginStringClaim_sub="admin";`,
      'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class': JWKS_HANDLER,
      'sasl.oauthbearer.jwks.endpoint.url': url,
      'sasl.oauthbearer.expected.issuer': ISSUER,
      'sasl.oauthbearer.expected.audience': AUDIENCE,
    }
    targets.push(await startFerrolog({ ...props, [ALLOWED_URLS]: url }))
    restoreJavaOptions = allowUrlsInJvms([url])
    targets.push(await startKafka(props))
  }, 180_000)
  afterAll(async () => {
    restoreJavaOptions()
    for (const t of targets) await t.stop().catch(() => undefined)
    jwksServer?.closeAllConnections()
    jwksServer?.close()
  })

  it('kafkajs with a signed token produces and consumes; a badly signed, wrong-audience or expired token is refused alike', async () => {
    const outcomes: Record<string, unknown> = {}
    for (const t of targets) {
      const token = await sign(signer)
      outcomes[t.name] = {
        produced: await produceConsume(t.port, () => token, 'jwks-t'),
        badlySigned: await attempt(t.port, await sign(stranger)),
        wrongAudience: await attempt(t.port, await sign(signer, { aud: 'another-cluster' })),
        expired: await attempt(t.port, await sign(signer, {}, now() - 120)),
      }
    }
    expect(outcomes.ferrolog).toEqual({
      produced: ['one', 'two'],
      badlySigned: 'refused',
      wrongAudience: 'refused',
      expired: 'refused',
    })
    expect(outcomes.ferrolog).toEqual(outcomes.kafka)
  }, 120_000)
})
