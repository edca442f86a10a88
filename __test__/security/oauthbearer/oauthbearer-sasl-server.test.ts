import { describe, expect, it } from 'vitest'
import { createLogger } from '../../../ts/logger.js'
import { SaslAuthenticationError, type SaslServerContext } from '../../../ts/security/sasl-server.js'
import { clientInitialResponseBytes, parseClientInitialResponse, OAuthBearerMessageError } from '../../../ts/security/oauthbearer/oauthbearer-client-initial-response.js'
import { INVALID_CREDENTIALS_MESSAGE, OAuthBearerSaslServer, oauthBearerSaslServerFactory } from '../../../ts/security/oauthbearer/oauthbearer-sasl-server.js'
import { OAuthBearerUnsecuredValidator, unsecuredValidatorOptions } from '../../../ts/security/oauthbearer/oauthbearer-unsecured-validator.js'
import { OAuthBearerConfigError } from '../../../ts/security/oauthbearer/oauthbearer-token.js'

const context: SaslServerContext = { listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT', clientAddress: '127.0.0.1' }
const NOW = 1_700_000_000_000

/** An unsecured JWS as Kafka's OAuthBearerUnsecuredLoginCallbackHandler writes one. */
export function unsecuredJws(claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'none' }): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${part(header)}.${part(claims)}.`
}

function validator(options: Record<string, string> = {}, now = NOW) {
  return new OAuthBearerUnsecuredValidator(unsecuredValidatorOptions(options), () => now)
}

function logCapture() {
  const lines: string[] = []
  return { lines, logger: createLogger({ level: 'debug', write: (l) => lines.push(l) }) }
}

const valid = { sub: 'alice', iat: NOW / 1000 - 10, exp: NOW / 1000 + 3600, scope: ['read', 'write'] }

describe('OAUTHBEARER client first message (RFC 7628 3.1, Kafka grammar)', () => {
  it('reads the token, the authzid and the extensions', () => {
    const m = parseClientInitialResponse(Buffer.from('n,a=alice,\x01auth=Bearer abc.def.\x01traceId=42 x\x01\x01'))
    expect(m).toEqual({ tokenValue: 'abc.def.', authorizationId: 'alice', extensions: new Map([['traceId', '42 x']]) })
    expect(parseClientInitialResponse(Buffer.from('n,,\x01auth=bearer tok==\x01\x01')).tokenValue).toBe('tok==')
  })

  it('round-trips what our client writes', () => {
    const bytes = clientInitialResponseBytes('a.b.c', 'bob', new Map([['logicalCluster', 'lc-1']]))
    expect(parseClientInitialResponse(bytes)).toEqual({ tokenValue: 'a.b.c', authorizationId: 'bob', extensions: new Map([['logicalCluster', 'lc-1']]) })
  })

  it.each([
    ['no GS2 header', 'auth=Bearer t\x01\x01'],
    ['y GS2 flag', 'y,,\x01auth=Bearer t\x01\x01'],
    ['missing final ^A', 'n,,\x01auth=Bearer t\x01'],
    ['no auth', 'n,,\x01foo=bar\x01\x01'],
    ['other scheme', 'n,,\x01auth=Basic dXNlcg==\x01\x01'],
    ['token with a space', 'n,,\x01auth=Bearer a b\x01\x01'],
    ['non-ASCII extension key', 'n,,\x01auth=Bearer t\x01k\u00e9y=v\x01\x01'],
    ['authzid with a raw comma', 'n,a=a,b,\x01auth=Bearer t\x01\x01'],
    ['empty', ''],
  ])('refuses %s', (_name, text) => {
    expect(() => parseClientInitialResponse(Buffer.from(text))).toThrow(OAuthBearerMessageError)
  })
})

describe('OAuthBearerUnsecuredValidator (Kafka OAuthBearerUnsecuredValidatorCallbackHandler)', () => {
  it('accepts a valid alg:none token and gives its principal, scope and lifetime', async () => {
    const r = await validator().validate(unsecuredJws(valid))
    expect('token' in r && { p: r.token.principalName, s: [...r.token.scope], l: r.token.lifetimeMs }).toEqual({ p: 'alice', s: ['read', 'write'], l: NOW + 3_600_000 })
  })

  it.each([
    ['expired', { ...valid, exp: NOW / 1000 - 1 }, 'invalid_token', /on or after the Expiration Time/],
    ['issued in the future', { ...valid, iat: NOW / 1000 + 60 }, 'invalid_token', /Issued At value/],
    ['exp not after iat', { ...valid, iat: NOW / 1000 - 5, exp: NOW / 1000 - 5 }, 'invalid_token', /Expiration Time/],
    ['without exp', { sub: 'alice' }, 'invalid_token', /No expiration time/],
    ['without sub', { exp: NOW / 1000 + 60 }, 'invalid_token', /No principal name in JWT claim: sub/],
    ['exp of the wrong type', { sub: 'a', exp: 'soon' }, 'invalid_token', /'exp' claim was not of type Number/],
  ])('refuses a token %s', async (_n, claims, status, reason) => {
    const r = await validator().validate(unsecuredJws(claims))
    expect('failure' in r && r.failure.status).toBe(status)
    expect('failure' in r && r.failure.reason).toMatch(reason)
  })

  it('refuses a signed token and a malformed one', async () => {
    const signed = unsecuredJws(valid, { alg: 'RS256' })
    expect(await validator().validate(signed)).toMatchObject({ failure: { reason: "Unsecured JWS must have 'none' for an algorithm" } })
    expect(await validator().validate(unsecuredJws(valid) + 'c2ln')).toMatchObject({ failure: { status: 'invalid_token' } })
    expect(await validator().validate('a..b')).toMatchObject({ failure: { reason: "Malformed compact serialization contains '..'" } })
    expect(await validator().validate('!!!.e30.')).toMatchObject({ failure: { reason: 'malformed Base64 URL encoded value' } })
  })

  it('honours the principal claim, scope claim, required scope and clock skew options', async () => {
    const v = validator({
      unsecuredValidatorPrincipalClaimName: 'client_id',
      unsecuredValidatorScopeClaimName: 'scp',
      unsecuredValidatorRequiredScope: 'kafka  admin',
      unsecuredValidatorAllowableClockSkewMs: '5000',
    })
    const claims = { client_id: 'svc', scp: ['kafka', 'admin'], exp: NOW / 1000 - 2 }
    expect(await v.validate(unsecuredJws(claims))).toMatchObject({ token: { principalName: 'svc' } })
    const r = await v.validate(unsecuredJws({ ...claims, scp: 'kafka' }))
    expect(r).toMatchObject({ failure: { status: 'insufficient_scope', scope: '[kafka, admin]' } })
    expect(() => unsecuredValidatorOptions({ unsecuredValidatorAllowableClockSkewMs: '-1' })).toThrow(OAuthBearerConfigError)
    expect(() => unsecuredValidatorOptions({ unsecuredValidatorRequiredScope: 'a"b' })).toThrow(OAuthBearerConfigError)
  })
})

describe('OAuthBearerSaslServer', () => {
  it('completes with the token principal and its exp as the credential expiry (KIP-368)', async () => {
    const server = oauthBearerSaslServerFactory(validator())(context)
    const challenge = await server.evaluateResponse(clientInitialResponseBytes(unsecuredJws(valid)))
    expect(challenge.length).toBe(0)
    expect(server.complete).toBe(true)
    expect(server.authorizationId()).toBe('alice')
    expect(server.credentialExpiresAtMs?.()).toBe(NOW + 3_600_000)
  })

  it('answers a refused token with the JSON error challenge, then fails on the client ^A', async () => {
    const server = new OAuthBearerSaslServer(validator({ unsecuredValidatorRequiredScope: 'admin' }), context)
    const challenge = await server.evaluateResponse(clientInitialResponseBytes(unsecuredJws(valid)))
    expect(challenge.toString()).toBe('{"status":"insufficient_scope", "scope":"[admin]"}')
    expect(server.complete).toBe(false)
    await expect(server.evaluateResponse(Buffer.from([1]))).rejects.toThrow(new SaslAuthenticationError('{"status":"insufficient_scope", "scope":"[admin]"}'))

    const expired = new OAuthBearerSaslServer(validator(), context)
    expect((await expired.evaluateResponse(clientInitialResponseBytes(unsecuredJws({ ...valid, exp: 1 })))).toString()).toBe('{"status":"invalid_token"}')
  })

  it('refuses an authzid other than the principal, and a malformed message with the generic message', async () => {
    const server = new OAuthBearerSaslServer(validator(), context)
    await expect(server.evaluateResponse(clientInitialResponseBytes(unsecuredJws(valid), 'mallory'))).rejects.toThrow(
      /authorization id \(mallory\) that is different from the token's principal name \(alice\)/,
    )
    await expect(new OAuthBearerSaslServer(validator(), context).evaluateResponse(Buffer.from('garbage'))).rejects.toThrow(new SaslAuthenticationError(INVALID_CREDENTIALS_MESSAGE))
    // A ^A with no error pending is just a malformed first message.
    await expect(new OAuthBearerSaslServer(validator(), context).evaluateResponse(Buffer.from([1]))).rejects.toThrow(INVALID_CREDENTIALS_MESSAGE)
  })

  it('fuzz: random and mutated messages never crash and always fail with a typed error or an error challenge', async () => {
    let seed = 0x5eed
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
    const good = clientInitialResponseBytes(unsecuredJws(valid))
    const { lines, logger } = logCapture()
    const v = validator()
    for (let i = 0; i < 2000; i++) {
      let input: Buffer
      if (i % 2 === 0) {
        input = Buffer.from(good)
        for (let k = 0, n = 1 + Math.floor(rand() * 4); k < n; k++) input[Math.floor(rand() * input.length)] = Math.floor(rand() * 256)
      } else {
        input = Buffer.alloc(Math.floor(rand() * 300))
        for (let k = 0; k < input.length; k++) input[k] = rand() < 0.3 ? [0x01, 0x2c, 0x3d, 0x2e][Math.floor(rand() * 4)] : Math.floor(rand() * 256)
      }
      const server = new OAuthBearerSaslServer(v, context, logger)
      try {
        const challenge = await server.evaluateResponse(input)
        if (!server.complete) expect(JSON.parse(challenge.toString())).toHaveProperty('status')
      } catch (err) {
        expect(err).toBeInstanceOf(SaslAuthenticationError)
      }
    }
    expect(lines.length).toBeGreaterThan(0)
  })

  it('never puts the token in a log line or an error message', async () => {
    const { lines, logger } = logCapture()
    const tokens = [unsecuredJws({ ...valid, exp: 1 }), unsecuredJws(valid, { alg: 'HS256' }), unsecuredJws({ ...valid, sub: '' })]
    const errors: string[] = []
    for (const token of tokens) {
      const server = new OAuthBearerSaslServer(validator({ unsecuredValidatorRequiredScope: 'admin' }), context, logger)
      const challenge = await server.evaluateResponse(clientInitialResponseBytes(token, 'alice'))
      errors.push(challenge.toString())
      await server.evaluateResponse(Buffer.from([1])).catch((e: Error) => errors.push(e.message))
    }
    expect(lines.length).toBeGreaterThanOrEqual(3)
    for (const token of tokens) {
      for (const text of [...lines, ...errors]) {
        expect(text).not.toContain(token)
        expect(text).not.toContain(token.split('.')[1])
      }
    }
  })
})
