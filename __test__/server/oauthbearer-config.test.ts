import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../ts/config/config-def.js'
import { silentLogger } from '../../ts/logger.js'
import { parseJaasConfig } from '../../ts/security/jaas-config.js'
import { oauthBearerValidatorConfig, type OAuthBearerListenerSetup } from '../../ts/server/oauthbearer-config.js'

const MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'
const HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler'

/** A listener's view of `props` as sasl-mechanisms.ts gives it: mechanism, then listener, then broker. */
function setup(props: Record<string, string>, jaas = `${MODULE} required;`): OAuthBearerListenerSetup {
  const p = 'listener.name.external.'
  return { listenerName: 'EXTERNAL', jaas: parseJaasConfig(jaas), config: (name) => props[`${p}oauthbearer.${name}`] ?? props[p + name] ?? props[name], logger: silentLogger }
}

describe("a listener's OAUTHBEARER settings, read as Kafka reads them", () => {
  it('defaults to the unsecured validator, its options from the JAAS entry', () => {
    expect(oauthBearerValidatorConfig(setup({}, `${MODULE} required unsecuredValidatorRequiredScope="kafka" unsecuredValidatorAllowableClockSkewMs="500";`))).toEqual({
      kind: 'unsecured',
      jaasOptions: { unsecuredValidatorRequiredScope: 'kafka', unsecuredValidatorAllowableClockSkewMs: '500' },
    })
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
    expect(oauthBearerValidatorConfig(setup(props))).toEqual({
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

  it('refuses at start what cannot work: unknown handler, bad value, URL not allowed, no issuer, two JAAS entries, bad JAAS option', () => {
    const jwks = {
      'sasl.server.callback.handler.class': HANDLER,
      'sasl.oauthbearer.jwks.endpoint.url': 'https://idp/jwks',
      'sasl.oauthbearer.expected.issuer': 'i',
      'sasl.oauthbearer.expected.audience': 'a',
    }
    const allowed = { ...jwks, 'org.apache.kafka.sasl.oauthbearer.allowed.urls': 'https://idp/jwks' }
    expect(oauthBearerValidatorConfig(setup(allowed))).toMatchObject({ kind: 'jwks' })
    expect(() => oauthBearerValidatorConfig(setup({ 'sasl.server.callback.handler.class': 'com.example.Mine' }))).toThrow(ConfigError)
    expect(() => oauthBearerValidatorConfig(setup({ ...allowed, 'sasl.oauthbearer.clock.skew.seconds': '-1' }))).toThrow(ConfigError)
    expect(() => oauthBearerValidatorConfig(setup(jwks))).toThrow(/org\.apache\.kafka\.sasl\.oauthbearer\.allowed\.urls/)
    expect(() => oauthBearerValidatorConfig(setup({ ...allowed, 'sasl.oauthbearer.expected.issuer': '' }))).toThrow(/expected\.issuer/)
    expect(() => oauthBearerValidatorConfig(setup({}, `${MODULE} required; ${MODULE} optional;`))).toThrow(/exactly 1/)
    expect(() => oauthBearerValidatorConfig(setup({}, `${MODULE} required unsecuredValidatorAllowableClockSkewMs="-5";`))).toThrow(ConfigError)
  })
})
