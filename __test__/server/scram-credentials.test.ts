/**
 * DescribeUserScramCredentials and AlterUserScramCredentials on the wire with Kafka's validation
 * and error codes (DUPLICATE_RESOURCE, UNACCEPTABLE_CREDENTIAL, UNSUPPORTED_SASL_MECHANISM,
 * RESOURCE_NOT_FOUND), a refused request changing nothing of the valid users beside it only for
 * the user refused; DescribeClientQuotas' filter checks; and credentials acknowledged before a
 * kill -9 all there after the restart, each authenticating its own password.
 */
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { alterUserScramCredentialsCodec } from '../../ts/protocol/apis/alter-user-scram-credentials.js'
import { describeClientQuotasCodec, MatchType } from '../../ts/protocol/apis/describe-client-quotas.js'
import { describeUserScramCredentialsCodec } from '../../ts/protocol/apis/describe-user-scram-credentials.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { authMessage, ScramFormatter } from '../../ts/security/scram/scram-formatter.js'
import { SCRAM_SHA_256, SCRAM_SHA_512, type ScramMechanism } from '../../ts/security/scram/scram-mechanism.js'
import { ScramSaslServer } from '../../ts/security/scram/scram-sasl-server.js'
import type { Broker } from '../../ts/server/broker.js'
import { SCRAM_CREDENTIALS_FILE } from '../../ts/server/file-scram-credential-store.js'
import { startBroker } from '../helpers/broker.js'
import { tempDir } from '../helpers/tmp.js'
import { spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

let broker: Broker | undefined
let child: BrokerProcess | undefined
let wire: KafkaWire | undefined
afterEach(async () => {
  wire?.close()
  wire = undefined
  await child?.stop()
  child = undefined
  await broker?.stop()
  broker = undefined
})

function upsertion(name: string, mechanism: ScramMechanism | number, password: string, iterations = 4096) {
  const salt = randomBytes(24)
  const m = typeof mechanism === 'number' ? SCRAM_SHA_256 : mechanism
  return { name, mechanism: typeof mechanism === 'number' ? mechanism : mechanism.type, iterations, salt, saltedPassword: new ScramFormatter(m).saltedPassword(password, salt, iterations) }
}

const results = (r: { results: Array<{ user: string; errorCode: number; errorMessage: string | null }> }) => Object.fromEntries(r.results.map((x) => [x.user, [x.errorCode, x.errorMessage]]))

/** Whether `password` authenticates `user` with `mechanism` against the broker's credentials. */
async function authenticates(b: Broker, mechanism: ScramMechanism, user: string, password: string): Promise<boolean> {
  const server = new ScramSaslServer(mechanism, b.scramCredentials.cache)
  const f = new ScramFormatter(mechanism)
  const bare = `n=${user},r=nonce`
  try {
    const first = (await server.evaluateResponse(Buffer.from(`n,,${bare}`))).toString()
    const [, nonce, salt, i] = /^r=([^,]+),s=([^,]+),i=(\d+)$/.exec(first)!
    const proof = f.clientProof(f.saltedPassword(password, Buffer.from(salt, 'base64'), Number(i)), authMessage(bare, first, `c=biws,r=${nonce}`))
    await server.evaluateResponse(Buffer.from(`c=biws,r=${nonce},p=${proof.toString('base64')}`))
    return server.complete
  } catch {
    return false
  }
}

describe('SCRAM credential ApiKeys', () => {
  it("AlterUserScramCredentials refuses as Kafka's controller does, user by user", async () => {
    broker = await startBroker()
    wire = new KafkaWire(await connectTo(broker.port), 'scram-wire')
    const alter = (deletions: Array<{ name: string; mechanism: number }>, upsertions: ReturnType<typeof upsertion>[]) => wire!.send(alterUserScramCredentialsCodec, 0, { deletions, upsertions })

    const first = await alter(
      [{ name: 'ghost', mechanism: SCRAM_SHA_256.type }],
      [
        upsertion('alice', SCRAM_SHA_256, 'a'),
        upsertion('twice', SCRAM_SHA_256, 'x'),
        upsertion('twice', SCRAM_SHA_512, 'y'),
        upsertion('', SCRAM_SHA_256, 'x'),
        upsertion('weird', 9, 'x'),
        upsertion('few', SCRAM_SHA_512, 'x', 4095),
        upsertion('many', SCRAM_SHA_512, 'x', 16385),
        upsertion('max', SCRAM_SHA_512, 'm', 16384),
      ],
    )
    expect(results(first)).toEqual({
      alice: [ErrorCode.NONE, null],
      max: [ErrorCode.NONE, null],
      ghost: [ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
      twice: [ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request'],
      '': [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty'],
      weird: [ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism'],
      few: [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations'],
      many: [ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations'],
    })
    // Kafka's order: deletions, upsertions, then the failures.
    expect(first.results.slice(0, 2).map((r) => r.user)).toEqual(['alice', 'max'])
    expect([...broker.scramCredentials.cache.entries()].map((e) => `${e.mechanismName}/${e.username}/${e.credential.iterations}`).sort()).toEqual([
      'SCRAM-SHA-256/alice/4096',
      'SCRAM-SHA-512/max/16384',
    ])
    expect(await authenticates(broker, SCRAM_SHA_256, 'alice', 'a')).toBe(true)
    expect(await authenticates(broker, SCRAM_SHA_512, 'max', 'm')).toBe(true)

    // A user deleted and upserted in one request is named twice; nothing of it changes.
    const both = await alter([{ name: 'alice', mechanism: SCRAM_SHA_256.type }], [upsertion('alice', SCRAM_SHA_512, 'b')])
    expect(results(both)).toEqual({ alice: [ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request'] })
    expect(await authenticates(broker, SCRAM_SHA_256, 'alice', 'a')).toBe(true)
    const deleted = await alter([{ name: 'alice', mechanism: SCRAM_SHA_256.type }], [])
    expect(results(deleted)).toEqual({ alice: [ErrorCode.NONE, null] })
    expect(await authenticates(broker, SCRAM_SHA_256, 'alice', 'a')).toBe(false)
  })

  it('DescribeUserScramCredentials lists mechanisms and iterations, refusing duplicates and unknown users', async () => {
    broker = await startBroker()
    wire = new KafkaWire(await connectTo(broker.port), 'scram-wire')
    await wire.send(alterUserScramCredentialsCodec, 0, {
      deletions: [],
      upsertions: [upsertion('alice', SCRAM_SHA_256, 'a', 8192), upsertion('bob', SCRAM_SHA_512, 'b')],
    })
    await wire.send(alterUserScramCredentialsCodec, 0, { deletions: [], upsertions: [upsertion('alice', SCRAM_SHA_512, 'a2')] })
    const all = await wire.send(describeUserScramCredentialsCodec, 0, { users: null })
    expect(all.errorCode).toBe(0)
    expect(all.results.sort((a, b) => a.user.localeCompare(b.user))).toEqual([
      {
        user: 'alice',
        errorCode: 0,
        errorMessage: null,
        credentialInfos: [
          { mechanism: 1, iterations: 8192 },
          { mechanism: 2, iterations: 4096 },
        ],
      },
      { user: 'bob', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 4096 }] },
    ])
    expect((await wire.send(describeUserScramCredentialsCodec, 0, { users: [] })).results).toHaveLength(2)
    const named = await wire.send(describeUserScramCredentialsCodec, 0, { users: [{ name: 'bob' }, { name: 'nobody' }, { name: 'alice' }, { name: 'alice' }] })
    expect(Object.fromEntries(named.results.map((r) => [r.user, [r.errorCode, r.errorMessage, r.credentialInfos]]))).toEqual({
      bob: [0, null, [{ mechanism: 2, iterations: 4096 }]],
      nobody: [ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to describe a user credential that does not exist: nobody', []],
      alice: [ErrorCode.DUPLICATE_RESOURCE, 'Cannot describe SCRAM credentials for the same user twice in a single request: alice', []],
    })
  })

  it('DescribeClientQuotas answers no quotas, and refuses the filters Kafka refuses with its messages', async () => {
    broker = await startBroker()
    wire = new KafkaWire(await connectTo(broker.port), 'quota-wire')
    const ask = (components: Array<{ entityType: string; matchType: number; match: string | null }>, version = 1) => wire!.send(describeClientQuotasCodec, version, { components, strict: false })
    expect(await ask([{ entityType: 'user', matchType: MatchType.EXACT, match: 'alice' }])).toEqual({ throttleTimeMs: 0, errorCode: 0, errorMessage: '', entries: [] })
    expect((await ask([{ entityType: 'user', matchType: MatchType.SPECIFIED, match: null }], 0)).entries).toEqual([])
    const refused: Array<[Parameters<typeof ask>[0], number, string]> = [
      [[{ entityType: '', matchType: 0, match: 'x' }], ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.'],
      [[{ entityType: 'topic', matchType: 0, match: 'x' }], ErrorCode.UNSUPPORTED_VERSION, 'Unsupported entity type topic'],
      [[{ entityType: 'user', matchType: 0, match: null }], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_EXACT, but set match string to null.'],
      [[{ entityType: 'user', matchType: 1, match: 'x' }], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.'],
      [[{ entityType: 'user', matchType: 2, match: 'x' }], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.'],
      [[{ entityType: 'user', matchType: 7, match: null }], ErrorCode.INVALID_REQUEST, 'Unknown match type 7'],
      [
        [
          { entityType: 'user', matchType: 0, match: 'a' },
          { entityType: 'user', matchType: 2, match: null },
        ],
        ErrorCode.INVALID_REQUEST,
        'Entity type user cannot appear more than once in the filter.',
      ],
      [
        [
          { entityType: 'ip', matchType: 2, match: null },
          { entityType: 'client-id', matchType: 1, match: null },
        ],
        ErrorCode.INVALID_REQUEST,
        'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
      ],
    ]
    for (const [components, errorCode, errorMessage] of refused) expect(await ask(components)).toEqual({ throttleTimeMs: 0, errorCode, errorMessage, entries: null })
  })

  it('every credential acknowledged before a kill -9 is there after the restart', async () => {
    child = await spawnBroker({})
    wire = new KafkaWire(await connectTo(child.port), 'scram-crash')
    const acknowledged: string[] = []
    const killAt = Date.now() + 1500
    let killed = false
    for (let i = 0; i < 10_000 && !killed; i++) {
      const sent = wire.send(alterUserScramCredentialsCodec, 0, { deletions: [], upsertions: [upsertion(`user-${i}`, i % 2 ? SCRAM_SHA_512 : SCRAM_SHA_256, `pw-${i}`)] })
      if (Date.now() >= killAt) {
        process.kill(child.pid, 'SIGKILL')
        killed = true
        await Promise.race([sent.catch(() => undefined), new Promise((r) => setTimeout(r, 500))])
        break
      }
      const r = await sent
      expect(r.results[0].errorCode).toBe(0)
      acknowledged.push(`user-${i}`)
    }
    expect(killed).toBe(true)
    expect(acknowledged.length).toBeGreaterThan(3)
    await child.stop()
    const dataDir = child.dataDir
    child = undefined
    broker = await startBroker({ dataDir })
    for (const user of acknowledged) {
      const i = Number(user.slice(5))
      expect(await authenticates(broker, i % 2 ? SCRAM_SHA_512 : SCRAM_SHA_256, user, `pw-${i}`), user).toBe(true)
    }
  }, 60_000)

  it('a credentials file that does not parse refuses the start, naming the file and quoting none of it', async () => {
    for (const text of [
      '{"version":1,"credentials":{"SCRAM-SHA-256":{"alice":{"salt":"c2VjcmV0LXNhbHQ=","storedKey":"not base64!","serverKey":"AA==","iterations":4096}}}}',
      'secret-garbage',
      '{"version":2}',
    ]) {
      const dataDir = tempDir('ferrolog-scram-bad-')
      writeFileSync(join(dataDir, SCRAM_CREDENTIALS_FILE), text)
      const err = await startBroker({ dataDir }).then(
        (b) => ((broker = b), null),
        (e: Error) => e,
      )
      expect(err?.message).toContain(`${join(dataDir, SCRAM_CREDENTIALS_FILE)} is not a valid SCRAM credentials file`)
      for (const secret of ['c2VjcmV0LXNhbHQ=', 'not base64!', 'secret-garbage']) expect(err?.message).not.toContain(secret)
    }
  })
})
