import { once } from 'node:events'
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../../ts/logger.js'
import type { BrokerJwtValidatorOptions } from '../../../ts/security/oauthbearer/broker-jwt-validator.js'
import { clientInitialResponseBytes } from '../../../ts/security/oauthbearer/oauthbearer-client-initial-response.js'
import { OAuthBearerSaslServer } from '../../../ts/security/oauthbearer/oauthbearer-sasl-server.js'
import { OAuthBearerConfigError, type OAuthBearerValidator } from '../../../ts/security/oauthbearer/oauthbearer-token.js'
import { createOAuthBearerValidator, type JwksValidatorConfig } from '../../../ts/security/oauthbearer/oauthbearer-validator-factory.js'
import { unsecuredJws } from './oauthbearer-sasl-server.test.js'

const ISSUER = 'https://idp.example'
const AUDIENCE = 'kafka-cluster'

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>
interface SigningKey {
  kid: string
  alg: 'RS256' | 'ES256'
  pair: KeyPair
  jwk: JWK
}

async function signingKey(kid: string, alg: 'RS256' | 'ES256'): Promise<SigningKey> {
  const pair = await generateKeyPair(alg, { extractable: true })
  return { kid, alg, pair, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' } }
}

async function sign(key: SigningKey, claims: Record<string, unknown> = {}, options: { iat?: number | null; exp?: number; kid?: string } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT({ sub: 'alice', scope: 'kafka read', iss: ISSUER, aud: AUDIENCE, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
    .setExpirationTime(options.exp ?? now + 600)
  if (options.iat !== null) jwt.setIssuedAt(options.iat ?? now - 5)
  return jwt.sign(key.pair.privateKey)
}

/** A JWKS endpoint on 127.0.0.1 whose key set the test changes (a provider's key rotation). */
class JwksServer {
  keys: JWK[] = []
  requests = 0
  status = 200
  private server: Server = createServer((req, res) => {
    this.requests++
    res.writeHead(this.status, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keys: this.keys }))
  })
  url = ''
  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/jwks.json`
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections()
    this.server.close()
    await once(this.server, 'close')
  }
}

const baseValidator: BrokerJwtValidatorOptions = {
  expectedAudience: [AUDIENCE],
  expectedIssuer: ISSUER,
  allowUnverifiedAudience: false,
  allowUnverifiedIssuer: false,
  clockSkewSeconds: 30,
  scopeClaimName: 'scope',
  subClaimName: 'sub',
  requiredScope: [],
}

function jwksConfig(url: string, over: Partial<JwksValidatorConfig> = {}, validator: Partial<BrokerJwtValidatorOptions> = {}) {
  return { kind: 'jwks' as const, jwksEndpointUrl: url, refreshMs: 3_600_000, retryBackoffMs: 10, retryBackoffMaxMs: 50, allowedUrls: [url], ...over, validator: { ...baseValidator, ...validator } }
}

describe('BrokerJwtValidator over a JWKS served on 127.0.0.1 (KIP-768)', () => {
  const jwks = new JwksServer()
  let rsa: SigningKey, ec: SigningKey, rotated: SigningKey, stranger: SigningKey
  const open: OAuthBearerValidator[] = []
  const validatorFor = async (...args: Parameters<typeof jwksConfig>) => {
    const v = await createOAuthBearerValidator(jwksConfig(...args))
    open.push(v)
    return v
  }

  beforeAll(async () => {
    ;[rsa, ec, rotated, stranger] = await Promise.all([signingKey('rsa-1', 'RS256'), signingKey('ec-1', 'ES256'), signingKey('rsa-2', 'RS256'), signingKey('rsa-1', 'RS256')])
    await jwks.start()
  })
  afterEach(() => {
    for (const v of open.splice(0)) v.close()
    jwks.keys = [rsa.jwk, ec.jwk]
    jwks.status = 200
  })
  afterAll(() => jwks.stop())

  it('accepts RS256 and ES256 tokens signed by keys of the set, with sub, scope and exp', async () => {
    jwks.keys = [rsa.jwk, ec.jwk]
    const v = await validatorFor(jwks.url)
    const exp = Math.floor(Date.now() / 1000) + 300
    for (const key of [rsa, ec]) {
      const r = await v.validate(await sign(key, {}, { exp }))
      expect(r).toEqual({ token: { principalName: 'alice', scope: new Set(['kafka read']), lifetimeMs: exp * 1000, startTimeMs: expect.any(Number) } })
    }
  })

  it.each([
    ['expired', () => sign(rsa, {}, { iat: Math.floor(Date.now() / 1000) - 600, exp: Math.floor(Date.now() / 1000) - 60 }), /"exp" claim timestamp check failed/],
    ['from another issuer', () => sign(rsa, { iss: 'https://evil.example' }), /unexpected "iss" claim value/],
    ['for another audience', () => sign(rsa, { aud: 'other' }), /unexpected "aud" claim value/],
    ['badly signed (same kid, other key)', () => sign(stranger), /signature verification failed/],
    ['without iat', () => sign(rsa, {}, { iat: null }), /missing required "iat" claim/],
    ['with exp before iat', () => sign(rsa, {}, { iat: Math.floor(Date.now() / 1000) + 20, exp: Math.floor(Date.now() / 1000) + 10 }), /cannot be before the Issued At/],
    ['that is not a JWS at all', () => Promise.resolve('not-a-token'), /expected three sections/],
    ['unsigned (alg: none)', () => Promise.resolve(unsecuredJws({ sub: 'alice', iss: ISSUER, aud: AUDIENCE, iat: 1, exp: 9999999999 }) + 'AAAA'), /'none' is not a permitted algorithm/],
    ['with an empty signature', () => Promise.resolve(unsecuredJws({ sub: 'alice' })), /expected at least one character for the signature/],
    ['with a blank sub', () => sign(rsa, { sub: '  ' }), /sub value must not contain only whitespace/],
    ['with duplicate scopes', () => sign(rsa, { scope: ['a', 'a'] }), /must not contain duplicates/],
  ])('refuses a token %s as invalid_token', async (_name, make, reason) => {
    jwks.keys = [rsa.jwk, ec.jwk]
    const v = await validatorFor(jwks.url)
    const r = await v.validate(await make())
    expect(r).toMatchObject({ failure: { status: 'invalid_token' } })
    expect('failure' in r && r.failure.reason).toMatch(reason)
  })

  it('allows the configured clock skew past exp', async () => {
    jwks.keys = [rsa.jwk]
    const now = Math.floor(Date.now() / 1000)
    const token = await sign(rsa, {}, { iat: now - 100, exp: now - 10 })
    expect(await (await validatorFor(jwks.url)).validate(token)).toMatchObject({ token: { principalName: 'alice' } })
    expect(await (await validatorFor(jwks.url, {}, { clockSkewSeconds: 0 })).validate(token)).toMatchObject({ failure: { status: 'invalid_token' } })
  })

  it('uses sasl.oauthbearer.sub.claim.name and scope.claim.name, and expected.scope answers insufficient_scope', async () => {
    jwks.keys = [rsa.jwk]
    const v = await validatorFor(jwks.url, {}, { subClaimName: 'client_id', scopeClaimName: 'scp', requiredScope: ['kafka'] })
    expect(await v.validate(await sign(rsa, { client_id: 'svc-1', scp: ['kafka', 'x'] }))).toMatchObject({ token: { principalName: 'svc-1' } })
    expect(await v.validate(await sign(rsa, { client_id: 'svc-1', scp: ['x'] }))).toMatchObject({ failure: { status: 'insufficient_scope', scope: '[kafka]' } })
  })

  it('an unknown kid triggers one refresh that picks up a rotated key; the same unknown kid again does not refetch', async () => {
    jwks.keys = [rsa.jwk]
    const v = await validatorFor(jwks.url)
    const before = jwks.requests
    jwks.keys = [rsa.jwk, rotated.jwk]
    expect(await v.validate(await sign(rotated))).toMatchObject({ token: { principalName: 'alice' } })
    expect(jwks.requests).toBe(before + 1)
    const ghost = await sign(rotated, {}, { kid: 'ghost' })
    expect(await v.validate(ghost)).toMatchObject({ failure: { status: 'invalid_token' } })
    expect(jwks.requests).toBe(before + 2)
    for (let i = 0; i < 20; i++) expect(await v.validate(ghost)).toMatchObject({ failure: { status: 'invalid_token' } })
    expect(jwks.requests).toBe(before + 2)
  })

  it('refreshes every sasl.oauthbearer.jwks.endpoint.refresh.ms, and keeps its keys when the endpoint fails', async () => {
    jwks.keys = [rsa.jwk]
    const v = await validatorFor(jwks.url, { refreshMs: 100 })
    const start = jwks.requests
    await expect.poll(() => jwks.requests, { timeout: 10_000 }).toBeGreaterThan(start + 1)
    jwks.status = 500
    const failing = jwks.requests
    await expect.poll(() => jwks.requests, { timeout: 10_000 }).toBeGreaterThan(failing + 1)
    expect(await v.validate(await sign(rsa))).toMatchObject({ token: { principalName: 'alice' } })
  })

  it('refuses to start without an allowed URL, an unreachable JWKS, or without expected issuer/audience (Kafka 4.4)', async () => {
    jwks.keys = [rsa.jwk]
    await expect(createOAuthBearerValidator(jwksConfig(jwks.url, { allowedUrls: [] }))).rejects.toThrow(/org\.apache\.kafka\.sasl\.oauthbearer\.allowed\.urls/)
    await expect(createOAuthBearerValidator(jwksConfig('ftp://127.0.0.1/x', { allowedUrls: ['ftp://127.0.0.1/x'] }))).rejects.toThrow(/invalid protocol/)
    await expect(createOAuthBearerValidator(jwksConfig(jwks.url, {}, { expectedAudience: [] }))).rejects.toThrow(OAuthBearerConfigError)
    await expect(createOAuthBearerValidator(jwksConfig(jwks.url, {}, { expectedIssuer: null }))).rejects.toThrow(/sasl\.oauthbearer\.allow\.unverified\.issuer/)
    jwks.status = 503
    await expect(createOAuthBearerValidator(jwksConfig(jwks.url))).rejects.toThrow(/VerificationKeyResolver/)
    jwks.status = 200
    const lax = await validatorFor(jwks.url, {}, { expectedAudience: [], allowUnverifiedAudience: true, expectedIssuer: null, allowUnverifiedIssuer: true })
    expect(await lax.validate(await sign(rsa, { aud: 'anything', iss: 'anyone' }))).toMatchObject({ token: { principalName: 'alice' } })
  })

  it('reads a file: JWKS and picks up a rewritten file without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jwks-'))
    try {
      const file = join(dir, 'jwks.json')
      writeFileSync(file, JSON.stringify({ keys: [rsa.jwk] }))
      const url = pathToFileURL(file).href
      const v = await validatorFor(url)
      expect(await v.validate(await sign(rsa))).toMatchObject({ token: { principalName: 'alice' } })
      expect(await v.validate(await sign(ec))).toMatchObject({ failure: { status: 'invalid_token' } })
      writeFileSync(file, JSON.stringify({ keys: [rsa.jwk, ec.jwk] }))
      utimesSync(file, new Date(), new Date(Date.now() + 5000))
      expect(await v.validate(await sign(ec))).toMatchObject({ token: { principalName: 'alice' } })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('through the SASL server: error challenge for a bad token, no token in any log line or message', async () => {
    jwks.keys = [rsa.jwk]
    const v = await validatorFor(jwks.url)
    const lines: string[] = []
    const logger = createLogger({ level: 'debug', write: (l) => lines.push(l) })
    const context = { listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT' as const, clientAddress: '127.0.0.1' }
    const bad = [await sign(stranger), await sign(rsa, { aud: 'x' }), await sign(rsa, {}, { iat: 1, exp: 2 })]
    const messages: string[] = []
    for (const token of bad) {
      const server = new OAuthBearerSaslServer(v, context, logger)
      messages.push((await server.evaluateResponse(clientInitialResponseBytes(token))).toString())
      await server.evaluateResponse(Buffer.from([1])).catch((e: Error) => messages.push(e.message))
    }
    expect(messages.filter((m) => m === '{"status":"invalid_token"}').length).toBe(6)
    const good = new OAuthBearerSaslServer(v, context, logger)
    const token = await sign(rsa)
    await good.evaluateResponse(clientInitialResponseBytes(token))
    expect(good.authorizationId()).toBe('alice')
    for (const t of [...bad, token]) for (const text of [...lines, ...messages]) for (const part of [t, ...t.split('.')]) expect(text).not.toContain(part)
  })
})
