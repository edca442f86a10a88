import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../ts/config/config-def.js'
import { parseJaasConfig } from '../../ts/security/jaas-config.js'
import { oauthBearerValidatorConfig } from '../../ts/server/oauthbearer-config.js'

const JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka" unsecuredValidatorAllowableClockSkewMs=500;'
const HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler'

describe("a listener's OAUTHBEARER settings, read as Kafka reads them", () => {
  it('defaults to the unsecured validator with the JAAS options of the listener (then sasl.jaas.config)', () => {
    expect(oauthBearerValidatorConfig({ 'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': JAAS }, 'SASL_PLAINTEXT')).toEqual({
      kind: 'unsecured',
      jaasOptions: { unsecuredValidatorRequiredScope: 'kafka', unsecuredValidatorAllowableClockSkewMs: '500' },
    })
    expect(oauthBearerValidatorConfig({ 'sasl.jaas.config': JAAS }, 'EXTERNAL')).toMatchObject({ kind: 'unsecured', jaasOptions: { unsecuredValidatorRequiredScope: 'kafka' } })
    expect(oauthBearerValidatorConfig({}, 'EXTERNAL')).toEqual({ kind: 'unsecured', jaasOptions: {} })
  })

  it('picks the JWKS validator by the callback handler class, each key listener-and-mechanism prefixed first', () => {
    const props = {
      'listener.name.external.oauthbearer.sasl.server.callback.handler.class': HANDLER,
      'listener.name.external.oauthbearer.sasl.oauthbearer.jwks.endpoint.url': 'https://idp/jwks',
      'listener.name.external.sasl.oauthbearer.expected.audience': 'a, b',
      'sasl.oauthbearer.expected.issuer': 'https://idp',
      'sasl.oauthbearer.expected.audience': 'ignored',
      'org.apache.kafka.sasl.oauthbearer.allowed.urls': 'https://idp/jwks,https://other',
      'sasl.oauthbearer.expected.scope': 'kafka  admin',
    }
    expect(oauthBearerValidatorConfig(props, 'EXTERNAL')).toEqual({
      kind: 'jwks',
      jwksEndpointUrl: 'https://idp/jwks',
      refreshMs: 3_600_000,
      retryBackoffMs: 100,
      retryBackoffMaxMs: 10_000,
      allowedUrls: ['https://idp/jwks', 'https://other'],
      validator: {
        expectedAudience: ['a', 'b'],
        expectedIssuer: 'https://idp',
        allowUnverifiedAudience: false,
        allowUnverifiedIssuer: false,
        clockSkewSeconds: 30,
        scopeClaimName: 'scope',
        subClaimName: 'sub',
        requiredScope: ['kafka', 'admin'],
      },
    })
  })

  it('refuses an unknown handler, a bad value, a JAAS config that is not OAuthBearerLoginModule, without echoing JAAS values', () => {
    expect(() => oauthBearerValidatorConfig({ 'listener.name.x.oauthbearer.sasl.server.callback.handler.class': 'com.example.Mine' }, 'X')).toThrow(ConfigError)
    expect(() => oauthBearerValidatorConfig({ 'sasl.server.callback.handler.class': HANDLER, 'sasl.oauthbearer.clock.skew.seconds': '-1' }, 'X')).toThrow(ConfigError)
    const plain = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret-value";'
    expect(() => oauthBearerValidatorConfig({ 'sasl.jaas.config': plain }, 'X')).toThrow(/PlainLoginModule/)
    let message = ''
    try {
      oauthBearerValidatorConfig({ 'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required password="s3cret-value"' }, 'X')
    } catch (err) {
      message = (err as Error).message
    }
    expect(message).toMatch(/not terminated/)
    expect(message).not.toContain('s3cret-value')
  })

  it('parses JAAS config as Kafka: quoted and bare values, comments, several modules', () => {
    expect(parseJaasConfig('/* c */ a.B required k1=v1 k2="x y;\\"z"; // end\n c.D optional;')).toEqual([
      { loginModule: 'a.B', controlFlag: 'required', options: { k1: 'v1', k2: 'x y;"z' } },
      { loginModule: 'c.D', controlFlag: 'optional', options: {} },
    ])
  })
})
