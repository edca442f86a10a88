/**
 * The SASL authenticator of a SASL_PLAINTEXT listener, on real sockets: no password in any log
 * line of a failed or a successful PLAIN authentication; KIP-368 sessions (lifetime answered,
 * the next request past it closes the connection, re-authentication with the same principal
 * renews it, another principal is refused, the credential's own expiry bounds it); users from a
 * JAAS file; the config errors a broker refuses to start with; a seeded fuzz of SaslAuthenticate
 * payloads and of raw frames (no crash, no bypass); 10,000 failed authentications while an
 * authenticated client keeps being served (its latency percentiles against an idle baseline are
 * printed, not asserted).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Kafka, logLevel } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../ts/config/config-def.js'
import type { Connection } from '../../ts/network/connection.js'
import { SaslServerAuthenticator } from '../../ts/network/sasl-server-authenticator.js'
import { SocketServer } from '../../ts/network/socket-server.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { silentLogger } from '../../ts/logger.js'
import { principalToString } from '../../ts/security/kafka-principal.js'
import { SaslAuthenticationError, type SaslServer } from '../../ts/security/sasl-server.js'
import { lineLogger, plainJaas, SASL_LISTENER, startSaslBroker, type SaslBroker } from '../helpers/sasl-broker.js'
import { plainToken, SaslWire } from '../helpers/sasl-wire.js'
import { tempDir } from '../helpers/tmp.js'

let sasl: SaslBroker | undefined
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
  await sasl?.stop()
  sasl = undefined
})

const METADATA = { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }
const USERS = { alice: 'Al1ce-Pa55word-7391', bob: 'B0b-Pa55word-5521' }
const PROPS = { 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': plainJaas(USERS) }

async function authenticated(port: number, user: keyof typeof USERS = 'alice'): Promise<SaslWire> {
  const wire = await SaslWire.open(port)
  cleanups.push(() => wire.close())
  expect((await wire.handshake('PLAIN'))!.errorCode).toBe(0)
  expect((await wire.authenticate(plainToken(user, USERS[user])))!.errorCode).toBe(0)
  return wire
}

/** A small seeded PRNG (mulberry32): the fuzz is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('SASL authentication', () => {
  it('never logs a password or a token, of a failed or a successful PLAIN authentication (debug level)', async () => {
    const lines: string[] = []
    sasl = await startSaslBroker(PROPS, { logger: lineLogger(lines) })
    const wrongPassword = 'Wr0ng-Guess-4417'
    const client = (password: string) =>
      new Kafka({ clientId: 'log-scan', brokers: [`127.0.0.1:${sasl!.port}`], sasl: { mechanism: 'plain', username: 'alice', password }, logLevel: logLevel.NOTHING, retry: { retries: 0 } })
    const bad = client(wrongPassword).admin()
    await expect(bad.connect()).rejects.toThrow(/Invalid username or password/)
    await bad.disconnect()
    const good = client(USERS.alice).admin()
    await good.connect()
    expect(await good.listTopics()).toContain('__consumer_offsets')
    await good.disconnect()
    // Raw: a v0 token too, and a malformed one.
    const legacy = await SaslWire.open(sasl.port)
    await legacy.handshake('PLAIN', 0)
    legacy.writeFrame(plainToken('bob', wrongPassword))
    await legacy.closed
    const log = lines.join('\n')
    expect(log).toContain('failed authentication')
    expect(log).toContain('"principal":"User:alice"')
    for (const secret of [wrongPassword, USERS.alice, USERS.bob]) {
      expect(log).not.toContain(secret)
      expect(log).not.toContain(Buffer.from(secret).toString('base64'))
      expect(log).not.toContain(Buffer.from(secret).toString('hex'))
    }
  }, 60_000)

  it("the same broker's PLAINTEXT listener needs no authentication and answers SaslHandshake and SaslAuthenticate ILLEGAL_SASL_STATE", async () => {
    sasl = await startSaslBroker(PROPS)
    const plain = await SaslWire.open(sasl.plaintextPort)
    cleanups.push(() => plain.close())
    expect(await plain.request(metadataCodec, 12, METADATA)).not.toBeNull()
    expect(await plain.handshake('PLAIN')).toEqual({ errorCode: 34, mechanisms: [] })
    expect((await plain.authenticate(plainToken('alice', USERS.alice)))!.errorCode).toBe(34)
    expect(await plain.request(metadataCodec, 12, METADATA)).not.toBeNull()
    // While on the SASL listener the same Metadata closes the connection.
    const sasled = await SaslWire.open(sasl.port)
    expect(await sasled.request(metadataCodec, 12, METADATA)).toBeNull()
  }, 30_000)

  it('KIP-368: the session lifetime is answered; past it the next request closes the connection; re-authentication renews it, with the same principal only', async () => {
    sasl = await startSaslBroker({ ...PROPS, 'connections.max.reauth.ms': '1500' })
    const expiring = await SaslWire.open(sasl.port)
    cleanups.push(() => expiring.close())
    await expiring.handshake('PLAIN')
    const answer = await expiring.authenticate(plainToken('alice', USERS.alice), 1)
    expect(answer!.sessionLifetimeMs).toBe(1500n)
    // v0 has no session lifetime field: the client cannot know, the broker still expires it.
    expect(await expiring.request(metadataCodec, 12, METADATA)).not.toBeNull()

    const renewing = await authenticated(sasl.port)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect((await renewing.handshake('PLAIN'))!.errorCode).toBe(0)
    const renewed = await renewing.authenticate(plainToken('alice', USERS.alice))
    expect(renewed).toMatchObject({ errorCode: 0, sessionLifetimeMs: 1500n })
    // A second handshake within a second of the last re-authentication is not one: the broker answers ILLEGAL_SASL_STATE.
    expect((await renewing.handshake('PLAIN'))!.errorCode).toBe(34)

    const switching = await authenticated(sasl.port)
    await new Promise((resolve) => setTimeout(resolve, 500))
    // Past the first's lifetime (1500 ms after it authenticated): its next request closes it, unanswered.
    expect(await expiring.request(metadataCodec, 12, METADATA)).toBeNull()
    // The renewed one lives on.
    expect(await renewing.request(metadataCodec, 12, METADATA)).not.toBeNull()
    // Re-authentication as another user is refused, and closes.
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect((await switching.handshake('PLAIN'))!.errorCode).toBe(0)
    const refused = await switching.authenticate(plainToken('bob', USERS.bob))
    expect(refused).toMatchObject({ errorCode: 58, errorMessage: 'Cannot change principals during re-authentication from User.alice: User.bob' })
    await switching.closed
  }, 30_000)

  it('kafkajs re-authenticates by itself within connections.max.reauth.ms and keeps producing', async () => {
    sasl = await startSaslBroker({ ...PROPS, 'connections.max.reauth.ms': '2000' })
    const kafka = new Kafka({
      clientId: 'reauth',
      brokers: [`127.0.0.1:${sasl.port}`],
      sasl: { mechanism: 'plain', username: 'alice', password: USERS.alice },
      logLevel: logLevel.NOTHING,
      reauthenticationThreshold: 1000,
    })
    const admin = kafka.admin()
    cleanups.push(() => admin.disconnect())
    await admin.connect()
    await admin.createTopics({ topics: [{ topic: 'reauth', numPartitions: 1 }] })
    const producer = kafka.producer()
    cleanups.push(() => producer.disconnect())
    await producer.connect()
    for (let i = 0; i < 8; i++) {
      await producer.send({ topic: 'reauth', messages: [{ value: `m${i}` }] })
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    const offsets = await admin.fetchTopicOffsets('reauth')
    expect(offsets[0].high).toBe('8')
  }, 30_000)

  it("the credential's own expiry bounds the session (SaslServer.credentialExpiresAtMs)", async () => {
    const expiresAt = Date.now() + 800
    const token: SaslServer = {
      mechanism: 'TEST-TOKEN',
      complete: false,
      evaluateResponse(response) {
        if (response.toString() !== 'good') return Promise.reject(new SaslAuthenticationError('bad token'))
        ;(this as { complete: boolean }).complete = true
        return Promise.resolve(Buffer.alloc(0))
      },
      authorizationId: () => 'tokenuser',
      credentialExpiresAtMs: () => expiresAt,
    }
    let last: Connection | undefined
    const server = new SocketServer(
      (_frame, connection) => {
        last = connection
        return Promise.resolve(Buffer.from([0, 0, 0, 0]))
      },
      {
        host: '127.0.0.1',
        port: 0,
        maxRequestBytes: 1 << 20,
        logger: silentLogger,
        listener: SASL_LISTENER,
        authenticator: () =>
          new SaslServerAuthenticator({
            mechanisms: new Map([['TEST-TOKEN', () => ({ ...token })]]),
            maxReceiveBytes: 1 << 16,
            failedAuthenticationDelayMs: 0,
            connectionsMaxReauthMs: () => 60_000,
            logger: silentLogger,
          }),
      },
    )
    const port = await server.listen()
    cleanups.push(() => server.stop())
    const wire = await SaslWire.open(port)
    cleanups.push(() => wire.close())
    await wire.handshake('TEST-TOKEN')
    const answer = await wire.authenticate(Buffer.from('good'))
    expect(Number(answer!.sessionLifetimeMs)).toBeGreaterThan(0)
    expect(Number(answer!.sessionLifetimeMs)).toBeLessThanOrEqual(800)
    wire.writeFrame(wire.requestFrame(metadataCodec, 12, METADATA))
    expect(await wire.nextFrame()).not.toBeNull()
    expect(principalToString(last!.principal)).toBe('User:tokenuser')
    await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 50))
    wire.writeFrame(wire.requestFrame(metadataCodec, 12, METADATA))
    expect(await wire.nextFrame()).toBeNull()
  }, 30_000)

  it('users from a JAAS file (<listener>.KafkaServer before KafkaServer); a per-listener mechanism list', async () => {
    const file = join(tempDir('jaas-'), 'kafka_server_jaas.conf')
    writeFileSync(
      file,
      `KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required user_carol="carol-secret"; };
       sasl_plaintext.KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required user_dave="dave-secret"; };`,
    )
    sasl = await startSaslBroker({ 'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'PLAIN', 'java.security.auth.login.config': file })
    const dave = await SaslWire.open(sasl.port)
    cleanups.push(() => dave.close())
    await dave.handshake('PLAIN')
    expect((await dave.authenticate(plainToken('dave', 'dave-secret')))!.errorCode).toBe(0)
    const carol = await SaslWire.open(sasl.port)
    cleanups.push(() => carol.close())
    await carol.handshake('PLAIN')
    expect((await carol.authenticate(plainToken('carol', 'carol-secret')))!.errorCode).toBe(58)
  }, 30_000)

  it('refuses to start with a mechanism it does not serve, no mechanism, no JAAS entry, or only an unprefixed sasl.jaas.config (ignored, as Kafka)', async () => {
    const fails = async (props: Record<string, string>, message: RegExp) => {
      const lines: string[] = []
      const started = startSaslBroker(props, { logger: lineLogger(lines) })
      await expect(started).rejects.toThrow(ConfigError)
      await expect(started).rejects.toThrow(message)
      return lines.join('\n')
    }
    await fails({}, /SASL mechanism GSSAPI enabled on listener SASL_PLAINTEXT is not supported/)
    await fails(
      { 'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-999', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': plainJaas(USERS) },
      /SCRAM-SHA-999 enabled on listener SASL_PLAINTEXT is not supported/,
    )
    await fails({ 'sasl.enabled.mechanisms': '' }, /No SASL mechanisms are enabled on listener SASL_PLAINTEXT/)
    const log = await fails({ 'sasl.enabled.mechanisms': 'PLAIN', 'sasl.jaas.config': plainJaas({ zed: 'zed-Secret-993' }) }, /Could not find a 'sasl_plaintext.KafkaServer' or 'KafkaServer' entry/)
    expect(log).toContain('sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config')
    expect(log).not.toContain('zed-Secret-993')
    await fails(
      { 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_x="y"' },
      /not terminated by semi-colon/,
    )
  }, 60_000)

  it('a seeded fuzz of SaslAuthenticate payloads and of raw frames: no crash, no bypass', async () => {
    sasl = await startSaslBroker({ ...PROPS, 'connection.failed.authentication.delay.ms': '0' })
    const random = prng(0x5a51)
    const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)))
    const near = (): Buffer => {
      // Mostly almost-right PLAIN messages: the right structure with one part changed.
      const parts = ['', 'alice', USERS.alice]
      const which = Math.floor(random() * 3)
      const r = random()
      parts[which] = r < 0.3 ? bytes(Math.floor(random() * 8)).toString('latin1') : r < 0.6 ? parts[which] + '\0' : r < 0.8 ? parts[which].slice(0, -1) : parts[which].toUpperCase()
      if (which === 0 && parts[0] === '') parts[0] = 'x'
      return Buffer.from(parts.join('\0'), 'latin1')
    }
    const round = async (i: number): Promise<string> => {
      const wire = await SaslWire.open(sasl!.port)
      try {
        const kind = i % 3
        if (kind === 2) {
          // Raw frames before any handshake.
          const frame = bytes(Math.floor(random() * 64))
          wire.writeFrame(frame)
          wire.writeFrame(wire.requestFrame(metadataCodec, 12, METADATA))
          const first = await wire.nextFrame()
          // Only an ApiVersions (key 18) frame may be answered; a Metadata never is.
          if (first !== null && frame.readInt16BE(0) !== 18) return `answered raw frame ${frame.toString('hex')}`
          const second = first === null ? null : await wire.nextFrame()
          return second === null ? 'closed' : `bypass: Metadata answered after ${frame.toString('hex')}`
        }
        await wire.handshake('PLAIN')
        const payload = kind === 0 ? near() : bytes(Math.floor(random() * 300))
        const answer = await wire.authenticate(payload)
        const valid = payload.equals(plainToken('alice', USERS.alice)) || payload.equals(plainToken('alice', USERS.alice, 'alice'))
        if (answer === null) return 'closed without answer'
        if (answer.errorCode === 0 && !valid) return `bypass: accepted ${payload.toString('hex')}`
        if (answer.errorCode !== 0 && answer.errorCode !== 58) return `unexpected error ${answer.errorCode}`
        if (answer.errorCode === 58) {
          const after = await wire.request(metadataCodec, 12, METADATA)
          if (after !== null) return 'bypass: served after a failure'
        }
        return answer.errorCode === 0 ? 'accepted' : 'refused'
      } finally {
        wire.close()
      }
    }
    const outcomes = new Map<string, number>()
    const ROUNDS = 1500
    for (let i = 0; i < ROUNDS; i += 25) {
      const batch = await Promise.all(Array.from({ length: 25 }, (_, j) => round(i + j)))
      for (const o of batch) outcomes.set(o, (outcomes.get(o) ?? 0) + 1)
    }
    const bad = [...outcomes.keys()].filter((o) => !['refused', 'closed', 'accepted'].includes(o))
    expect(bad).toEqual([])
    expect(outcomes.get('refused')! + outcomes.get('closed')! + (outcomes.get('accepted') ?? 0)).toBe(ROUNDS)
    // Still up and serving.
    const wire = await authenticated(sasl.port)
    expect(await wire.request(metadataCodec, 12, METADATA)).not.toBeNull()
  }, 120_000)

  it('10,000 failed authentications from one client while another keeps being served (latency printed against an idle baseline)', async () => {
    sasl = await startSaslBroker({ ...PROPS, 'connection.failed.authentication.delay.ms': '10' })
    const served = await authenticated(sasl.port, 'bob')
    const sample = async (n: number): Promise<number[]> => {
      const out: number[] = []
      for (let i = 0; i < n; i++) {
        const t = performance.now()
        expect(await served.request(metadataCodec, 12, METADATA)).not.toBeNull()
        out.push(performance.now() - t)
      }
      return out
    }
    const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
    const baseline = await sample(400)
    let failed = 0
    const FAILURES = 10_000
    const PARALLEL = 32
    const attacker = async () => {
      while (failed < FAILURES) {
        failed++
        const wire = await SaslWire.open(sasl!.port)
        await wire.handshake('PLAIN')
        const answer = await wire.authenticate(plainToken('alice', 'guess'))
        expect(answer!.errorCode).toBe(58)
        await wire.closed
      }
    }
    const started = performance.now()
    const attack = Promise.all(Array.from({ length: PARALLEL }, attacker))
    const during: number[] = []
    let done = false
    void attack.finally(() => (done = true))
    while (!done) during.push(...(await sample(20)))
    await attack
    const seconds = (performance.now() - started) / 1000
    expect(failed).toBeGreaterThanOrEqual(FAILURES)
    const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(2)} ms, p99 ${pct(xs, 99).toFixed(2)} ms, max ${Math.max(...xs).toFixed(2)} ms (${xs.length} requests)`
    console.log(
      `SASL failed-auth flood: ${failed} failures in ${seconds.toFixed(1)} s (${PARALLEL} connections at a time, delay 10 ms); served client's Metadata idle: ${fmt(baseline)}; during: ${fmt(during)}`,
    )
  }, 300_000)
})
