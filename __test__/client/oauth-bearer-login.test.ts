/**
 * OAUTHBEARER's OAuth login without a broker: Kafka's refresh-time arithmetic
 * (ExpiringCredentialRefreshingLogin), the client credentials request as a token endpoint on
 * 127.0.0.1 receives it (Basic auth, form body, scope), Kafka's retry rules (5xx retried with
 * backoff, 401 not), the read timeout, the claims read from the token, and the settings' checks
 * by Kafka's and librdkafka's names (allowed URLs, required credentials), never printing a
 * secret. The logins against real brokers are in
 * __test__/interop/sasl-oauthbearer-client-credentials.test.ts.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { generateKeyPair, SignJWT } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { clientSecurityFrom, closeClientSecurity } from '../../ts/client/client-security.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { ClientCredentialsJwtRetriever, JwtRetrieverError } from '../../ts/client/sasl/client-credentials-jwt-retriever.js'
import { DEFAULT_REFRESH_CONFIG, refreshTimeMs } from '../../ts/client/sasl/expiring-credential-refreshing-login.js'
import { clientJwtCredential, JwtValidatorError } from '../../ts/client/sasl/oauth-bearer-login.js'

const MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
const HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler'
const SECRET = 's3cr3t +/=&Value'

let server: Server | undefined
afterEach(() => {
  server?.closeAllConnections()
  server?.close()
  server = undefined
})

interface Seen {
  authorization: string | undefined
  contentType: string | undefined
  body: string
}

async function endpoint(answer: (n: number, req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: URL; seen: Seen[] }> {
  const seen: Seen[] = []
  server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({ authorization: req.headers.authorization, contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString() })
      answer(seen.length, req, res)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { url: new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/token`), seen }
}

async function jwt(claims: Record<string, unknown>): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256')
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).sign(privateKey)
}

const retriever = (url: URL, extra: Partial<ConstructorParameters<typeof ClientCredentialsJwtRetriever>[0]> = {}) =>
  new ClientCredentialsJwtRetriever({
    tokenEndpointUrl: url,
    clientId: 'app',
    clientSecret: SECRET,
    scope: 'kafka write',
    urlencodeHeader: false,
    retryBackoffMs: 10,
    retryBackoffMaxMs: 10_000,
    ...extra,
  })

describe("Kafka's refresh time (ExpiringCredentialRefreshingLogin)", () => {
  const c = DEFAULT_REFRESH_CONFIG
  it('a one-hour token: at 80-85% of its life from iat, within the 300 s buffer and past the 60 s minimum', () => {
    const start = 1_000_000_000
    const cred = { value: 'x', principalName: 'p', startTimeMs: start, expireTimeMs: start + 3_600_000 }
    expect(refreshTimeMs(cred, c, start, 0)).toBe(start + 2_880_000)
    expect(refreshTimeMs(cred, c, start, 1)).toBe(start + 3_060_000)
    // The end buffer wins over a late proposal; the minimum period over an early one.
    expect(refreshTimeMs(cred, { ...c, windowFactor: 1, windowJitter: 0 }, start, 0)).toBe(start + 3_300_000)
    expect(refreshTimeMs(cred, { ...c, windowFactor: 0.5, windowJitter: 0 }, start + 1_750_000, 0)).toBe(start + 1_810_000)
  })

  it('a life shorter than min period + buffer: a share of what is left from now; an expired one: no refresh', () => {
    const now = 2_000_000_000
    expect(refreshTimeMs({ value: 'x', principalName: 'p', expireTimeMs: now + 10_000 }, c, now, 0)).toBe(now + 8000)
    expect(refreshTimeMs({ value: 'x', principalName: 'p', expireTimeMs: now - 1 }, c, now, 0)).toBeNull()
  })
})

describe('the client credentials request (ClientCredentialsJwtRetriever)', () => {
  it('POSTs grant_type and scope with the id and secret by HTTP Basic, and takes access_token', async () => {
    const token = await jwt({ sub: 'app', exp: Math.floor(Date.now() / 1000) + 60 })
    const { url, seen } = await endpoint((_n, _req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, token_type: 'Bearer' })))
    expect(await retriever(url).retrieve()).toBe(token)
    expect(seen).toEqual([
      { authorization: `Basic ${Buffer.from(`app:${SECRET}`).toString('base64')}`, contentType: 'application/x-www-form-urlencoded', body: 'grant_type=client_credentials&scope=kafka+write' },
    ])
    // sasl.oauthbearer.header.urlencode: id and secret form-encoded inside the Basic credentials.
    await retriever(url, { urlencodeHeader: true }).retrieve()
    expect(Buffer.from(seen[1]!.authorization!.slice(6), 'base64').toString()).toBe('app:s3cr3t+%2B%2F%3D%26Value')
  })

  it('retries a 503 with backoff, not a 401; the error names the answer, never the secret', async () => {
    const token = await jwt({ sub: 'app', exp: Math.floor(Date.now() / 1000) + 60 })
    const flaky = await endpoint((n, _req, res) => (n < 3 ? res.writeHead(503).end('busy') : res.writeHead(200).end(JSON.stringify({ access_token: token }))))
    const r = retriever(flaky.url)
    expect(await r.retrieve()).toBe(token)
    expect(r.requests).toBe(3)
    server!.closeAllConnections()
    server!.close()

    const refused = await endpoint((_n, _req, res) => res.writeHead(401).end(JSON.stringify({ error: 'invalid_client', error_description: `bad secret ${SECRET}` })))
    const r2 = retriever(refused.url)
    const err = await r2.retrieve().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(JwtRetrieverError)
    expect((err as Error).message).toBe(`the token endpoint ${refused.url.href} answered HTTP 401 {invalid_client - bad secret [hidden]}; will not attempt further retries`)
    expect(r2.requests).toBe(1)
  })

  it('sasl.login.read.timeout.ms bounds each answer; retried until sasl.login.retry.backoff.max.ms', async () => {
    const { url } = await endpoint(() => {}) // never answers
    const r = retriever(url, { readTimeoutMs: 100, retryBackoffMs: 50, retryBackoffMaxMs: 2000 })
    const err = await r.retrieve().catch((e: unknown) => e)
    expect((err as Error).message).toBe(`the token endpoint ${url.href} did not answer within 100 ms (sasl.login.read.timeout.ms)`)
    expect(r.requests).toBeGreaterThanOrEqual(2)
  })

  it("reads the token's claims as Kafka's ClientJwtValidator: exp and sub required", async () => {
    const exp = Math.floor(Date.now() / 1000) + 60
    const c = await clientJwtCredential(await jwt({ sub: 'app', exp, iat: exp - 60, scope: 'a b' }), 'sub', 'scope')
    expect(c).toMatchObject({ principalName: 'app', expireTimeMs: exp * 1000, startTimeMs: (exp - 60) * 1000, scope: new Set(['a', 'b']) })
    await expect(clientJwtCredential(await jwt({ sub: 'app' }), 'sub', 'scope')).rejects.toThrow(new JwtValidatorError('exp value must be non-null'))
    await expect(clientJwtCredential(await jwt({ exp }), 'sub', 'scope')).rejects.toThrow(new JwtValidatorError('sub value must be non-null and non-empty'))
  })
})

describe('the OAuth login settings, by Kafka and librdkafka names', () => {
  const url = 'http://127.0.0.1:1/token'
  const kafka = (extra: Record<string, string> = {}) => ({
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism': 'OAUTHBEARER',
    'sasl.login.callback.handler.class': HANDLER,
    'sasl.oauthbearer.token.endpoint.url': url,
    'sasl.jaas.config': `${MODULE} required clientId="app" clientSecret="${SECRET}" extension_traceId="t1";`,
    'org.apache.kafka.sasl.oauthbearer.allowed.urls': url,
    ...extra,
  })
  const refusal = (config: Record<string, unknown>) => {
    try {
      closeClientSecurity(clientSecurityFrom(config))
    } catch (err) {
      expect(err).toBeInstanceOf(KafkaClientError)
      expect((err as KafkaClientError).code).toBe('INVALID_CONFIG')
      expect((err as Error).message).not.toContain(SECRET)
      return (err as Error).message
    }
    throw new Error('accepted')
  }

  it('Kafka: the login with the JAAS credentials; the token endpoint must be in the allowed URLs', () => {
    const security = clientSecurityFrom(kafka())
    expect(security.sasl?.oauthBearerLogin).toBeDefined()
    closeClientSecurity(security)
    expect(refusal(kafka({ 'org.apache.kafka.sasl.oauthbearer.allowed.urls': 'http://elsewhere/token' }))).toBe(
      `sasl.oauthbearer.token.endpoint.url=${url}: The URL cannot be accessed due to restrictions. Update the config 'org.apache.kafka.sasl.oauthbearer.allowed.urls' to allow the URL to be accessed.`,
    )
    expect(refusal(kafka({ 'sasl.jaas.config': `${MODULE} required clientSecret="${SECRET}";` }))).toBe(
      'Could not find OAuth configuration for sasl.oauthbearer.client.credentials.client.id or OAuth JAAS configuration for clientId',
    )
    expect(refusal(kafka({ 'sasl.oauthbearer.token.endpoint.url': 'file:///tmp/token' }))).toContain('is not supported')
    expect(refusal(kafka({ 'sasl.login.refresh.window.factor': '0.2' }))).toBe('sasl.login.refresh.window.factor=0.2: a number in [0.5, 1]')
    expect(refusal(kafka({ 'sasl.oauthbearer.jwt.retriever.class': 'org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever' }))).toContain('only the client credentials grant')
  })

  it('librdkafka: sasl.oauthbearer.method=oidc with client id and secret; no secret, no login', () => {
    const rd = {
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanisms': 'OAUTHBEARER',
      'sasl.oauthbearer.method': 'oidc',
      'sasl.oauthbearer.client.id': 'app',
      'sasl.oauthbearer.client.secret': SECRET,
      'sasl.oauthbearer.token.endpoint.url': url,
      'sasl.oauthbearer.extensions': 'traceId=t1,tenant=a',
    }
    const security = clientSecurityFrom(rd)
    expect(security.sasl?.oauthBearerLogin).toBeDefined()
    closeClientSecurity(security)
    expect(refusal({ ...rd, 'sasl.oauthbearer.client.secret': undefined })).toBe('Could not find OAuth configuration for sasl.oauthbearer.client.secret')
    expect(refusal({ ...rd, 'sasl.oauthbearer.client.id': 5 })).toBe('sasl.oauthbearer.client.id=5: a string')
    expect(refusal({ ...rd, 'sasl.oauthbearer.method': 'azure_imds' })).toBe('sasl.oauthbearer.method=azure_imds: default or oidc')
  })
})
