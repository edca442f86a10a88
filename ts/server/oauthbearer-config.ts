/**
 * A listener's OAUTHBEARER validator settings from server.properties, read as Kafka reads them:
 *
 * - the validator: `listener.name.<l>.oauthbearer.sasl.server.callback.handler.class` (Kafka's
 *   OAuthBearerValidatorCallbackHandler: JWKS; unset or the unsecured handler: unsecured tokens);
 * - the JAAS options (the unsecured validator's `unsecuredValidator*`):
 *   `listener.name.<l>.oauthbearer.sasl.jaas.config`, else `sasl.jaas.config`; its one login
 *   module must be Kafka's OAuthBearerLoginModule;
 * - each sasl.oauthbearer.* key (ts/config/broker-configs.ts): `listener.name.<l>.oauthbearer.<key>`,
 *   else `listener.name.<l>.<key>`, else `<key>` (Kafka's ConfigurationUtils with the listener's
 *   configs), parsed and checked by the config table.
 *
 * The listener name is lower-cased in prefixes, as Kafka's ListenerName.configPrefix does.
 */
import { BROKER_CONFIG_KEY, type OAuthBearerSettings } from '../config/broker-configs.js'
import { ConfigError } from '../config/config-def.js'
import { JaasConfigError, parseJaasConfig } from '../security/jaas-config.js'
import { OAUTHBEARER_LOGIN_MODULE, validatorKindOf, type OAuthBearerValidatorConfig } from '../security/oauthbearer/oauthbearer-validator-factory.js'
import { OAuthBearerConfigError } from '../security/oauthbearer/oauthbearer-token.js'

const MECHANISM_PREFIX = 'oauthbearer.'

/** The value of `name` for OAUTHBEARER on `listenerName`, most specific first. */
export function listenerMechanismValue(props: Readonly<Record<string, string>>, listenerName: string, name: string): string | undefined {
  const listener = `listener.name.${listenerName.toLowerCase()}.`
  return props[listener + MECHANISM_PREFIX + name] ?? props[listener + name] ?? props[name]
}

function setting<T>(props: Readonly<Record<string, string>>, listenerName: string, name: string): T {
  const key = BROKER_CONFIG_KEY.get(name)
  if (!key) throw new Error(`${name} is not in the broker config table`)
  const text = listenerMechanismValue(props, listenerName, name)
  return (text === undefined ? key.default : key.value.parse(text, name)) as T
}

/** The JAAS options of the listener's OAuthBearerLoginModule entry ({} when none is configured). */
export function oauthBearerJaasOptions(props: Readonly<Record<string, string>>, listenerName: string): Readonly<Record<string, string>> {
  const text = props[`listener.name.${listenerName.toLowerCase()}.${MECHANISM_PREFIX}sasl.jaas.config`] ?? props['sasl.jaas.config']
  if (text === undefined || text.trim() === '') return {}
  let modules
  try {
    modules = parseJaasConfig(text)
  } catch (err) {
    if (err instanceof JaasConfigError) throw new ConfigError(`sasl.jaas.config of listener ${listenerName}: ${err.message}`)
    throw err
  }
  if (modules.length !== 1) throw new ConfigError(`sasl.jaas.config of listener ${listenerName} must have exactly 1 login module for OAUTHBEARER, not ${modules.length}`)
  if (modules[0].loginModule !== OAUTHBEARER_LOGIN_MODULE)
    throw new ConfigError(`sasl.jaas.config of listener ${listenerName} for OAUTHBEARER must name ${OAUTHBEARER_LOGIN_MODULE}, not ${modules[0].loginModule}`)
  return modules[0].options
}

/** The validator settings of OAUTHBEARER on `listenerName`. */
export function oauthBearerValidatorConfig(props: Readonly<Record<string, string>>, listenerName: string): OAuthBearerValidatorConfig {
  let kind
  try {
    kind = validatorKindOf(listenerMechanismValue(props, listenerName, 'sasl.server.callback.handler.class'))
  } catch (err) {
    if (err instanceof OAuthBearerConfigError) throw new ConfigError(err.message)
    throw err
  }
  if (kind === 'unsecured') return { kind, jaasOptions: oauthBearerJaasOptions(props, listenerName) }
  const get = <F extends keyof OAuthBearerSettings>(name: string) => setting<OAuthBearerSettings[F]>(props, listenerName, name)
  return {
    kind,
    jwksEndpointUrl: get<'jwksEndpointUrl'>('sasl.oauthbearer.jwks.endpoint.url'),
    refreshMs: get<'jwksEndpointRefreshMs'>('sasl.oauthbearer.jwks.endpoint.refresh.ms'),
    retryBackoffMs: get<'jwksEndpointRetryBackoffMs'>('sasl.oauthbearer.jwks.endpoint.retry.backoff.ms'),
    retryBackoffMaxMs: get<'jwksEndpointRetryBackoffMaxMs'>('sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms'),
    allowedUrls: setting<readonly string[]>(props, listenerName, 'org.apache.kafka.sasl.oauthbearer.allowed.urls'),
    validator: {
      expectedAudience: get<'expectedAudience'>('sasl.oauthbearer.expected.audience'),
      expectedIssuer: get<'expectedIssuer'>('sasl.oauthbearer.expected.issuer'),
      allowUnverifiedAudience: get<'allowUnverifiedAudience'>('sasl.oauthbearer.allow.unverified.audience'),
      allowUnverifiedIssuer: get<'allowUnverifiedIssuer'>('sasl.oauthbearer.allow.unverified.issuer'),
      clockSkewSeconds: get<'clockSkewSeconds'>('sasl.oauthbearer.clock.skew.seconds'),
      scopeClaimName: get<'scopeClaimName'>('sasl.oauthbearer.scope.claim.name'),
      subClaimName: get<'subClaimName'>('sasl.oauthbearer.sub.claim.name'),
      requiredScope: get<'expectedScope'>('sasl.oauthbearer.expected.scope'),
    },
  }
}
