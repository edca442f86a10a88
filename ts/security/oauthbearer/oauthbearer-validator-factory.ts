/**
 * Builds the validator a listener's OAUTHBEARER uses, as Kafka picks its server callback handler
 * (`listener.name.<l>.oauthbearer.sasl.server.callback.handler.class`):
 *
 * - unset, or Kafka's OAuthBearerUnsecuredValidatorCallbackHandler: the unsecured validator (the
 *   broker's default in Kafka too), options from the JAAS config;
 * - Kafka's OAuthBearerValidatorCallbackHandler: the JWKS validator, keys from
 *   `sasl.oauthbearer.jwks.endpoint.url`, an `https:`/`http:` URL (RefreshingHttpsJwks) or a
 *   `file:` URL (JwksFileVerificationKeyResolver).
 *
 * Kafka 4 only reads a JWKS URL listed in the JVM system property
 * `org.apache.kafka.sasl.oauthbearer.allowed.urls` (comma-separated, exact match, empty by
 * default); ferrolog has the same list as the broker config of that name.
 */
import type { Logger } from '../../logger.js'
import { fileURLToPath } from 'node:url'
import { BrokerJwtValidator, checkBrokerJwtValidatorOptions, type BrokerJwtValidatorOptions } from './broker-jwt-validator.js'
import { JwksFileVerificationKeyResolver } from './jwks-file-verification-key-resolver.js'
import { OAuthBearerConfigError, type OAuthBearerValidator } from './oauthbearer-token.js'
import { OAuthBearerUnsecuredValidator, unsecuredValidatorOptions } from './oauthbearer-unsecured-validator.js'
import { RefreshingHttpsJwks } from './refreshing-https-jwks.js'
import { RefreshingHttpsJwksVerificationKeyResolver } from './refreshing-https-jwks-verification-key-resolver.js'
import type { VerificationKeyResolver } from './verification-key-resolver.js'

export const UNSECURED_VALIDATOR_CALLBACK_HANDLER = 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler'
export const VALIDATOR_CALLBACK_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler'
/** The same handler under its pre-3.x package name, which Kafka still accepts. */
export const LEGACY_VALIDATOR_CALLBACK_HANDLER = 'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler'
export const ALLOWED_URLS_CONFIG = 'org.apache.kafka.sasl.oauthbearer.allowed.urls'
export const OAUTHBEARER_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'

export interface JwksValidatorConfig {
  jwksEndpointUrl: string | null
  refreshMs: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  allowedUrls: readonly string[]
  validator: BrokerJwtValidatorOptions
}

export type OAuthBearerValidatorConfig = { kind: 'unsecured'; jaasOptions: Readonly<Record<string, string>> } | ({ kind: 'jwks' } & JwksValidatorConfig)

/** The validator kind a `sasl.server.callback.handler.class` value names. */
export function validatorKindOf(callbackHandlerClass: string | undefined): 'unsecured' | 'jwks' {
  const name = (callbackHandlerClass ?? '').trim()
  if (name === '' || name === UNSECURED_VALIDATOR_CALLBACK_HANDLER) return 'unsecured'
  if (name === VALIDATOR_CALLBACK_HANDLER || name === LEGACY_VALIDATOR_CALLBACK_HANDLER) return 'jwks'
  throw new OAuthBearerConfigError(`sasl.server.callback.handler.class for OAUTHBEARER must be ${UNSECURED_VALIDATOR_CALLBACK_HANDLER} or ${VALIDATOR_CALLBACK_HANDLER}, not ${name}`)
}

/** Kafka's ConfigurationUtils.validateUrl and throwIfURLIsNotAllowed for the JWKS URL. */
export function checkJwksUrl(url: string, allowedUrls: readonly string[]): URL {
  const name = 'sasl.oauthbearer.jwks.endpoint.url'
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new OAuthBearerConfigError(`The OAuth configuration option ${name} contains a URL (${url}) that is malformed`)
  }
  if (!['http:', 'https:', 'file:'].includes(parsed.protocol)) {
    throw new OAuthBearerConfigError(
      `The OAuth configuration option ${name} contains a URL (${url}) that contains an invalid protocol (${parsed.protocol.slice(0, -1)}); only "http", "https", and "file" protocol are supported`,
    )
  }
  if (!allowedUrls.map((u) => u.trim()).includes(url)) {
    throw new OAuthBearerConfigError(`The URL cannot be accessed due to restrictions. Update the broker config '${ALLOWED_URLS_CONFIG}' to allow the URL to be accessed.`)
  }
  return parsed
}

/**
 * The validator of `config`, its keys loaded. Rejects when they cannot be loaded; the listener
 * (ts/server/oauthbearer-config.ts) then refuses tokens and tries again at the next authentication.
 */
export async function createOAuthBearerValidator(config: OAuthBearerValidatorConfig, logger?: Logger): Promise<OAuthBearerValidator> {
  if (config.kind === 'unsecured') return new OAuthBearerUnsecuredValidator(unsecuredValidatorOptions(config.jaasOptions))
  if (!config.jwksEndpointUrl) {
    throw new OAuthBearerConfigError(
      `The OAuth validator for the broker requires "sasl.oauthbearer.jwks.endpoint.url" to be configured so that JWT signatures can be verified, but it was not set. Set "sasl.oauthbearer.jwks.endpoint.url" to the OAuth/OIDC provider's JWKS endpoint URL for this listener.`,
    )
  }
  checkBrokerJwtValidatorOptions(config.validator)
  const url = checkJwksUrl(config.jwksEndpointUrl, config.allowedUrls)
  let resolver: VerificationKeyResolver
  if (url.protocol === 'file:') {
    resolver = new JwksFileVerificationKeyResolver(fileURLToPath(url))
  } else {
    if (!(config.refreshMs > 0)) throw new OAuthBearerConfigError('The OAuth configuration option sasl.oauthbearer.jwks.endpoint.refresh.ms value must be positive')
    const jwks = new RefreshingHttpsJwks(url.href, { refreshMs: config.refreshMs, retryBackoffMs: config.retryBackoffMs, retryBackoffMaxMs: config.retryBackoffMaxMs, logger })
    resolver = new RefreshingHttpsJwksVerificationKeyResolver(jwks)
  }
  try {
    await resolver.init()
  } catch (err) {
    resolver.close()
    throw new OAuthBearerConfigError(`The OAuth validator configuration encountered an error when initializing the VerificationKeyResolver: ${(err as Error).message}`)
  }
  return new BrokerJwtValidator(config.validator, resolver)
}
