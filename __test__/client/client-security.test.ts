/**
 * The client's security pieces without a broker: SCRAM's client against RFC 7677's worked
 * example (and a server signature that does not match), PLAIN's and OAUTHBEARER's messages,
 * Kafka's JAAS lines and .properties files as Kafka's tools write them, and the config checks
 * (a bad value names its key, never a password). The exchanges with a real broker are in
 * security-sasl-kafka.test.ts and security-ssl-kafka.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { clientSecurityFrom, parseJaasConfig } from '../../ts/client/client-security.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { OAuthBearerSaslClient, unsecuredJwt } from '../../ts/client/sasl/oauth-bearer-sasl-client.js'
import { PlainSaslClient } from '../../ts/client/sasl/plain-sasl-client.js'
import { SaslClientError } from '../../ts/client/sasl/sasl-client.js'
import { ScramSaslClient, scramSaslName } from '../../ts/client/sasl/scram-sasl-client.js'
import { securityArgs } from '../../ts/cli/client-properties.js'
import { formatJavaProperties, parseJavaProperties } from '../../ts/config/java-properties.js'
import { CredentialCache } from '../../ts/security/scram/credential-cache.js'
import { ScramFormatter } from '../../ts/security/scram/scram-formatter.js'
import { SCRAM_SHA_256, SCRAM_SHA_512 } from '../../ts/security/scram/scram-mechanism.js'
import { ScramSaslServer } from '../../ts/security/scram/scram-sasl-server.js'

describe('SCRAM client', () => {
  // RFC 7677 section 3: user "user", password "pencil".
  const serverFirst = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'

  it("RFC 7677's SCRAM-SHA-256 example: the same client-first and client-final, the server signature accepted", async () => {
    const client = new ScramSaslClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO')
    expect((await client.initialResponse()).toString()).toBe('n,,n=user,r=rOprNGfwEbeRWgbNEkqO')
    const final = await client.evaluateChallenge(Buffer.from(serverFirst))
    expect(final!.toString()).toBe('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=')
    expect(client.complete).toBe(false)
    expect(await client.evaluateChallenge(Buffer.from('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='))).toBeNull()
    expect(client.complete).toBe(true)
  })

  it('refuses a server signature that does not match, a nonce it did not extend, too few iterations, an e= error', async () => {
    const started = async () => {
      const c = new ScramSaslClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO')
      await c.initialResponse()
      return c
    }
    const c1 = await started()
    await c1.evaluateChallenge(Buffer.from(serverFirst))
    await expect(c1.evaluateChallenge(Buffer.from('v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='))).rejects.toThrow(SaslClientError)
    expect(c1.complete).toBe(false)
    await expect((await started()).evaluateChallenge(Buffer.from('r=someoneElse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'))).rejects.toThrow(/nonce/)
    await expect((await started()).evaluateChallenge(Buffer.from('r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000'))).rejects.toThrow(/iterations/)
    const c4 = await started()
    await c4.evaluateChallenge(Buffer.from(serverFirst))
    await expect(c4.evaluateChallenge(Buffer.from('e=invalid-proof'))).rejects.toThrow(/invalid-proof/)
  })

  it('escapes = and , in the user name (RFC 5802 saslname)', () => {
    expect(scramSaslName('a=b,c')).toBe('a=3Db=2Cc')
  })

  it("completes an exchange with the broker's ScramSaslServer for both mechanisms (one SCRAM implementation on both sides), a wrong password refused", async () => {
    for (const mechanism of [SCRAM_SHA_256, SCRAM_SHA_512]) {
      const cache = new CredentialCache()
      cache.update(mechanism.mechanismName, 'a=b,c', new ScramFormatter(mechanism).generateCredential('pw', 4096))
      const exchange = async (password: string) => {
        const client = new ScramSaslClient(mechanism.mechanismName as 'SCRAM-SHA-256', 'a=b,c', password)
        const server = new ScramSaslServer(mechanism, cache)
        const clientFinal = await client.evaluateChallenge(await server.evaluateResponse(await client.initialResponse()))
        expect(await client.evaluateChallenge(await server.evaluateResponse(clientFinal!))).toBeNull()
        return { client, server }
      }
      const { client, server } = await exchange('pw')
      expect(client.complete && server.complete).toBe(true)
      expect(server.authorizationId()).toBe('a=b,c')
      await expect(exchange('wrong')).rejects.toThrow(/invalid credentials/)
    }
  })

  it('refuses malformed server messages with a SaslClientError that does not repeat them', async () => {
    const started = async () => {
      const c = new ScramSaslClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO')
      await c.initialResponse()
      return c
    }
    for (const bad of ['', 's=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', 'r=rOprNGfwEbeRWgbNEkqOx,s=not base64!,i=4096', 'r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4e3', '\xff\xfe']) {
      const err = await (await started()).evaluateChallenge(Buffer.from(bad, 'latin1')).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(SaslClientError)
      expect((err as Error).message).toMatch(/^SCRAM: Invalid SCRAM server first message/)
      if (bad.length > 0) expect((err as Error).message).not.toContain(bad)
    }
    const c = await started()
    await c.evaluateChallenge(Buffer.from(serverFirst))
    await expect(c.evaluateChallenge(Buffer.from('x=1'))).rejects.toThrow(/Invalid SCRAM server final message/)
  })
})

describe('PLAIN and OAUTHBEARER clients', () => {
  it('PLAIN sends NUL user NUL password once', async () => {
    const c = new PlainSaslClient('alice', 'pw')
    expect(await c.initialResponse()).toEqual(Buffer.from('\0alice\0pw'))
    expect(await c.evaluateChallenge(Buffer.alloc(0))).toBeNull()
    expect(c.complete).toBe(true)
  })

  it("OAUTHBEARER sends the GS2 header, the bearer token and extensions; acknowledges the server's error with \\x01", async () => {
    const token = unsecuredJwt({ principal: 'alice', scope: ['a'], lifeSeconds: 60 })
    const [header, claims, signature] = token.split('.')
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'none' })
    const c = JSON.parse(Buffer.from(claims, 'base64url').toString()) as Record<string, unknown>
    expect(c.sub).toBe('alice')
    expect(c.scope).toEqual(['a'])
    expect((c.exp as number) - (c.iat as number)).toBe(60)
    expect(signature).toBe('')
    const client = new OAuthBearerSaslClient(() => ({ value: token, extensions: { traceId: 'x1' } }))
    expect((await client.initialResponse()).toString()).toBe(`n,,\x01auth=Bearer ${token}\x01traceId=x1\x01\x01`)
    expect(await client.evaluateChallenge(Buffer.from('{"status":"invalid_token"}'))).toEqual(Buffer.from('\x01'))
    expect(client.complete).toBe(false)
    await expect(new OAuthBearerSaslClient(() => ({ value: 'has space' })).initialResponse()).rejects.toThrow(SaslClientError)
  })
})

describe('client security config', () => {
  it("parses Kafka's JAAS lines: quoted values with escapes, bare values, one module", () => {
    const e = parseJaasConfig('org.apache.kafka.common.security.scram.ScramLoginModule required username="al\\"ice" password=pw2;')
    expect(e.loginModule).toBe('org.apache.kafka.common.security.scram.ScramLoginModule')
    expect([...e.options]).toEqual([
      ['username', 'al"ice'],
      ['password', 'pw2'],
    ])
    expect(() => parseJaasConfig('Module required username="x"')).toThrow(/not terminated by semi-colon/)
    expect(() => parseJaasConfig('Module maybe;')).toThrow(KafkaClientError)
  })

  it('reads .properties as Java does: comments, continuations, separators, escapes', () => {
    const props = parseJavaProperties('# c\n! c\nsecurity.protocol = SASL_SSL\nsasl.jaas.config=a \\\n    b;\nkey:value\nspaced value two\nuni=\\u0041\\tx\n')
    expect(Object.fromEntries(props)).toEqual({ 'security.protocol': 'SASL_SSL', 'sasl.jaas.config': 'a b;', key: 'value', spaced: 'value two', uni: 'A\tx' })
  })

  it('--command-config then -X (which wins); an unknown -X key is a usage error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferrolog-props-'))
    try {
      const file = join(dir, 'client.properties')
      writeFileSync(
        file,
        'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";\nrequest.timeout.ms=1000\n',
      )
      const usage = (m: string) => new Error(`usage: ${m}`)
      const { rest, security } = securityArgs(['--topic', 't', '--command-config', file, '-X', 'sasl.username=v', '-Xsasl.password=q'], usage)
      expect(rest).toEqual(['--topic', 't'])
      expect(security).toEqual({ protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN', username: 'v', password: 'q' } })
      expect(() => securityArgs(['-X', 'linger.ms=5'], usage)).toThrow(/usage: -X linger.ms/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses what it cannot use, naming the key but never a secret', () => {
    const bad = (config: Record<string, unknown>) => {
      try {
        clientSecurityFrom(config)
      } catch (err) {
        expect(err).toBeInstanceOf(KafkaClientError)
        expect((err as KafkaClientError).code).toBe('INVALID_CONFIG')
        return (err as Error).message
      }
      throw new Error('accepted')
    }
    expect(bad({ 'security.protocol': 'TLS' })).toContain('security.protocol')
    expect(bad({ 'security.protocol': 'SASL_SSL' })).toContain('sasl.mechanism is required')
    expect(bad({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'GSSAPI' })).toContain('GSSAPI')
    expect(bad({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN', 'sasl.username': 'u' })).toContain('sasl.password')
    expect(bad({ 'security.protocol': 'SSL', 'ssl.truststore.type': 'JKS' })).toContain('PEM')
    expect(bad({ 'security.protocol': 'SSL', 'ssl.ca.location': '/nonexistent/ca.pem' })).toContain('ENOENT')
    const jaas = bad({
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="SeCrEt";',
    })
    expect(jaas).not.toContain('SeCrEt')
    expect(clientSecurityFrom({ securityProtocol: 'ssl', sslEndpointIdentificationAlgorithm: 'none' })).toEqual({ protocol: 'SSL', tls: { verifyHostname: false } })
  })
})
