/**
 * ScramSaslServer against the RFCs' example exchanges (RFC 7677's SCRAM-SHA-256, RFC 5802's
 * SCRAM-SHA-1 with a SHA-1 mechanism made for the test), and against a client built from
 * ScramFormatter for SCRAM-SHA-512, escaped user names and every refusal: unknown user, wrong
 * password, another authorization id, delegation tokens, channel binding, a changed nonce, too
 * few iterations, malformed and random messages. A refusal never says which of user or password
 * was wrong and never carries a secret.
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SaslAuthenticationError } from '../../../ts/security/sasl-server.js'
import { CredentialCache } from '../../../ts/security/scram/credential-cache.js'
import { describeCredential, type ScramCredential } from '../../../ts/security/scram/scram-credential.js'
import { authMessage, saslName, ScramFormatter, username } from '../../../ts/security/scram/scram-formatter.js'
import { SCRAM_SHA_256, SCRAM_SHA_512, type ScramMechanism } from '../../../ts/security/scram/scram-mechanism.js'
import { ScramSaslServer, scramSaslServerFactory } from '../../../ts/security/scram/scram-sasl-server.js'

const context = { listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT' as const, clientAddress: '127.0.0.1' }
const utf8 = (s: string) => Buffer.from(s, 'utf8')
const INVALID = (m: string) => `Authentication failed during authentication due to invalid credentials with SASL mechanism ${m}`

function cacheWith(mechanism: Pick<ScramMechanism, 'mechanismName'>, user: string, credential: ScramCredential): CredentialCache {
  const cache = new CredentialCache()
  cache.update(mechanism.mechanismName, user, credential)
  return cache
}

/** A SCRAM client (RFC 5802 section 3), from ScramFormatter: what kafkajs or the Java client send. */
async function authenticate(
  server: ScramSaslServer,
  mechanism: Pick<ScramMechanism, 'hashAlgorithm' | 'hashLength'>,
  user: string,
  password: string,
  opts: { gs2Header?: string; extensions?: string; tamperNonce?: boolean; channelBinding?: string } = {},
): Promise<Buffer> {
  const formatter = new ScramFormatter(mechanism)
  const gs2 = opts.gs2Header ?? 'n,,'
  const bare = `n=${saslName(user)},r=${randomBytes(12).toString('base64url')}${opts.extensions ?? ''}`
  const serverFirst = (await server.evaluateResponse(utf8(gs2 + bare))).toString()
  const m = /^r=([^,]+),s=([^,]+),i=(\d+)$/.exec(serverFirst)!
  const nonce = opts.tamperNonce ? m[1] + 'x' : m[1]
  const withoutProof = `c=${opts.channelBinding ?? utf8(gs2).toString('base64')},r=${nonce}`
  const salted = formatter.saltedPassword(password, Buffer.from(m[2], 'base64'), Number(m[3]))
  const proof = formatter.clientProof(salted, authMessage(bare, serverFirst, withoutProof))
  const serverFinal = await server.evaluateResponse(utf8(`${withoutProof},p=${proof.toString('base64')}`))
  const expected = formatter.serverSignature(formatter.serverKey(salted), authMessage(bare, serverFirst, withoutProof))
  expect(serverFinal.toString()).toBe(`v=${expected.toString('base64')}`)
  return serverFinal
}

async function refusal(run: () => Promise<unknown>): Promise<SaslAuthenticationError> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(SaslAuthenticationError)
  return err as SaslAuthenticationError
}

describe('ScramSaslServer', () => {
  it("answers RFC 7677's SCRAM-SHA-256 example exchange byte for byte", async () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64')
    const credential = new ScramFormatter(SCRAM_SHA_256).generateCredential('pencil', 4096, salt)
    const server = new ScramSaslServer(SCRAM_SHA_256, cacheWith(SCRAM_SHA_256, 'user', credential), { serverNonce: () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0' })
    const serverFirst = await server.evaluateResponse(utf8('n,,n=user,r=rOprNGfwEbeRWgbNEkqO'))
    expect(serverFirst.toString()).toBe('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096')
    expect(server.complete).toBe(false)
    const serverFinal = await server.evaluateResponse(utf8('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='))
    expect(serverFinal.toString()).toBe('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')
    expect(server.complete).toBe(true)
    expect(server.authorizationId()).toBe('user')
    expect(server.mechanism).toBe('SCRAM-SHA-256')
  })

  it("answers RFC 5802's example exchange with a SHA-1 mechanism (the formatter is the hash's, not SHA-256's)", async () => {
    const sha1 = { mechanismName: 'SCRAM-SHA-1', hashAlgorithm: 'sha1', hashLength: 20, minIterations: 4096 }
    const credential = new ScramFormatter(sha1).generateCredential('pencil', 4096, Buffer.from('QSXCR+Q6sek8bf92', 'base64'))
    const server = new ScramSaslServer(sha1, cacheWith(sha1, 'user', credential), { serverNonce: () => '3rfcNHYJY1ZVvWVs7j' })
    expect((await server.evaluateResponse(utf8('n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL'))).toString()).toBe('r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096')
    const final = await server.evaluateResponse(utf8('c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts='))
    expect(final.toString()).toBe('v=rmF9pqV8S7suAoZWja4dJRkFsKQ=')
    expect(server.authorizationId()).toBe('user')
  })

  it('authenticates SCRAM-SHA-512 and SCRAM-SHA-256 users through the factory, with a random server nonce each time', async () => {
    for (const mechanism of [SCRAM_SHA_512, SCRAM_SHA_256]) {
      const cache = cacheWith(mechanism, 'alice', new ScramFormatter(mechanism).generateCredential('alice-secret', 8192))
      for (let i = 0; i < 3; i++) {
        const server = scramSaslServerFactory(mechanism, cache)(context) as ScramSaslServer
        await authenticate(server, mechanism, 'alice', 'alice-secret')
        expect(server.complete).toBe(true)
        expect(server.authorizationId()).toBe('alice')
      }
      // The other mechanism's credential is not this one's.
      const other = mechanism === SCRAM_SHA_512 ? SCRAM_SHA_256 : SCRAM_SHA_512
      const err = await refusal(() => authenticate(new ScramSaslServer(other, cache), other, 'alice', 'alice-secret'))
      expect(err.message).toBe(INVALID(other.mechanismName))
    }
    const seen = new Set<string>()
    const cache = cacheWith(SCRAM_SHA_256, 'u', new ScramFormatter(SCRAM_SHA_256).generateCredential('p', 4096))
    for (let i = 0; i < 20; i++) {
      const first = await new ScramSaslServer(SCRAM_SHA_256, cache).evaluateResponse(utf8('n,,n=u,r=abc'))
      seen.add(/^r=abc([^,]+),/.exec(first.toString())![1])
    }
    expect(seen.size).toBe(20)
  })

  it('decodes =2C and =3D in user names, and refuses any other = escape', async () => {
    expect(saslName('a=b,c')).toBe('a=3Db=2Cc')
    expect(username('a=3Db=2Cc')).toBe('a=b,c')
    expect(username('=3D2C')).toBe('=2C')
    expect(username('a=4Fb')).toBeUndefined()
    const user = 'ops,team=red'
    const cache = cacheWith(SCRAM_SHA_256, user, new ScramFormatter(SCRAM_SHA_256).generateCredential('pw', 4096))
    const server = new ScramSaslServer(SCRAM_SHA_256, cache)
    await authenticate(server, SCRAM_SHA_256, user, 'pw')
    expect(server.authorizationId()).toBe(user)
    const bad = new ScramSaslServer(SCRAM_SHA_256, cache)
    expect((await refusal(() => bad.evaluateResponse(utf8('n,,n=ops=2Cteam=red,r=x')))).message).toBe(INVALID('SCRAM-SHA-256'))
  })

  it('refuses an unknown user and a wrong password with the same message, holding no secret', async () => {
    const credential = new ScramFormatter(SCRAM_SHA_256).generateCredential('right-password', 4096)
    const cache = cacheWith(SCRAM_SHA_256, 'alice', credential)
    const unknown = await refusal(() => authenticate(new ScramSaslServer(SCRAM_SHA_256, cache), SCRAM_SHA_256, 'mallory', 'right-password'))
    const wrong = new ScramSaslServer(SCRAM_SHA_256, cache)
    const wrongPassword = await refusal(() => authenticate(wrong, SCRAM_SHA_256, 'alice', 'wrong-password'))
    expect(unknown.message).toBe(INVALID('SCRAM-SHA-256'))
    expect(wrongPassword.message).toBe(unknown.message)
    expect(wrong.complete).toBe(false)
    expect(() => wrong.authorizationId()).toThrow(/has not completed/)
    // A failed exchange stays failed.
    await refusal(() => wrong.evaluateResponse(utf8('n,,n=alice,r=abc')))
    for (const secret of [credential.storedKey, credential.serverKey, credential.salt]) {
      for (const e of [unknown, wrongPassword]) {
        expect(e.message).not.toContain(secret.toString('base64'))
        expect(e.stack).not.toContain('password')
      }
    }
    expect(describeCredential(credential)).toBe('ScramCredential(iterations=4096, salt=[hidden], storedKey=[hidden], serverKey=[hidden])')
  })

  it('accepts an authorization id equal to the user and refuses another one, as Kafka', async () => {
    const cache = cacheWith(SCRAM_SHA_256, 'alice', new ScramFormatter(SCRAM_SHA_256).generateCredential('pw', 4096))
    const same = new ScramSaslServer(SCRAM_SHA_256, cache)
    await authenticate(same, SCRAM_SHA_256, 'alice', 'pw', { gs2Header: 'n,a=alice,' })
    expect(same.authorizationId()).toBe('alice')
    const other = await refusal(() => authenticate(new ScramSaslServer(SCRAM_SHA_256, cache), SCRAM_SHA_256, 'alice', 'pw', { gs2Header: 'n,a=admin,' }))
    expect(other.message).toBe('Authentication failed: Client requested an authorization id that is different from username')
  })

  it('refuses delegation tokens (tokenauth=true) saying they are not supported, and ignores other extensions', async () => {
    const cache = cacheWith(SCRAM_SHA_512, 'alice', new ScramFormatter(SCRAM_SHA_512).generateCredential('pw', 4096))
    const token = await refusal(() => authenticate(new ScramSaslServer(SCRAM_SHA_512, cache), SCRAM_SHA_512, 'alice', 'pw', { extensions: ',tokenauth=true' }))
    expect(token.message).toMatch(/delegation token authentication \(tokenauth\) is not supported/)
    const server = new ScramSaslServer(SCRAM_SHA_512, cache)
    await authenticate(server, SCRAM_SHA_512, 'alice', 'pw', { extensions: ',tokenauth=false,foo=bar' })
    expect(server.complete).toBe(true)
  })

  it('refuses channel binding, a c= that is not the gs2 header, a changed nonce and too few iterations', async () => {
    const f = new ScramFormatter(SCRAM_SHA_256)
    const cache = cacheWith(SCRAM_SHA_256, 'alice', f.generateCredential('pw', 4096))
    for (const first of ['p=tls-unique,,n=alice,r=abc', 'y,,n=alice,r=abc', 'n,,m=ext,n=alice,r=abc']) {
      expect((await refusal(() => new ScramSaslServer(SCRAM_SHA_256, cache).evaluateResponse(utf8(first)))).message).toBe(INVALID('SCRAM-SHA-256'))
    }
    await refusal(() => authenticate(new ScramSaslServer(SCRAM_SHA_256, cache), SCRAM_SHA_256, 'alice', 'pw', { channelBinding: 'eSws' }))
    await refusal(() => authenticate(new ScramSaslServer(SCRAM_SHA_256, cache), SCRAM_SHA_256, 'alice', 'pw', { tamperNonce: true }))
    const weak = cacheWith(SCRAM_SHA_256, 'old', f.generateCredential('pw', 4095))
    await refusal(() => authenticate(new ScramSaslServer(SCRAM_SHA_256, weak), SCRAM_SHA_256, 'old', 'pw'))
  })

  it('a message after completion, and malformed or random messages at either step, are refused without any other error', async () => {
    const cache = cacheWith(SCRAM_SHA_256, 'alice', new ScramFormatter(SCRAM_SHA_256).generateCredential('pw', 4096))
    const done = new ScramSaslServer(SCRAM_SHA_256, cache)
    await authenticate(done, SCRAM_SHA_256, 'alice', 'pw')
    await refusal(() => done.evaluateResponse(utf8('c=biws,r=x,p=AAAA')))
    const firsts = ['', 'n', 'n,', 'n,,', 'n,,n=', 'n,,n=alice', 'n,,n=alice,r=', 'n,,r=abc,n=alice', 'n,,n=alice,r=a b', 'n,,n=alice,r=abc,9=x', 'n,a=,n=alice,r=x']
    for (const first of firsts) await refusal(() => new ScramSaslServer(SCRAM_SHA_256, cache).evaluateResponse(utf8(first)))
    await refusal(() => new ScramSaslServer(SCRAM_SHA_256, cache).evaluateResponse(Buffer.from([0x6e, 0x2c, 0x2c, 0x6e, 0x3d, 0xff, 0x2c, 0x72, 0x3d, 0x61])))
    await refusal(() => new ScramSaslServer(SCRAM_SHA_256, cache).evaluateResponse(utf8('n,,n=al\0ice,r=abc')))
    const finals = ['', 'c=biws', 'c=biws,r=X,p=', 'c=bi!s,r=X,p=AAAA', 'r=X,c=biws,p=AAAA', 'c=biws,r=X,p=AAA']
    for (const final of finals) {
      const server = new ScramSaslServer(SCRAM_SHA_256, cache)
      const first = (await server.evaluateResponse(utf8('n,,n=alice,r=abc'))).toString()
      const nonce = /^r=([^,]+)/.exec(first)![1]
      await refusal(() => server.evaluateResponse(utf8(final.replace('X', nonce))))
    }
    // A proof of the right nonce but the wrong length.
    const server = new ScramSaslServer(SCRAM_SHA_256, cache)
    const nonce = /^r=([^,]+)/.exec((await server.evaluateResponse(utf8('n,,n=alice,r=abc'))).toString())![1]
    await refusal(() => server.evaluateResponse(utf8(`c=biws,r=${nonce},p=${Buffer.alloc(16).toString('base64')}`)))
    // Random bytes, and random mutations of a valid first message: refused, never thrown otherwise.
    for (let i = 0; i < 2000; i++) {
      const s = new ScramSaslServer(SCRAM_SHA_256, cache)
      const valid = utf8('n,,n=alice,r=abcdef')
      const msg = i % 2 === 0 ? randomBytes(i % 64) : Buffer.from(valid.map((b, j) => (j === i % valid.length ? (b + i) & 0xff : b)))
      const result = await s.evaluateResponse(msg).then(
        (r) => r,
        (e: unknown) => e,
      )
      if (!(result instanceof Buffer)) expect(result).toBeInstanceOf(SaslAuthenticationError)
    }
  })
})
