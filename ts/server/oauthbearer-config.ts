/**
 * OAUTHBEARER on one SASL listener (registered in sasl-mechanisms.ts): its validator settings read
 * as Kafka reads them, and the mechanism's SaslServerFactory.
 *
 * - The validator: `listener.name.<l>.oauthbearer.sasl.server.callback.handler.class` (Kafka's
 *   OAuthBearerValidatorCallbackHandler: JWKS; unset or the unsecured handler: unsecured tokens).
 * - The JAAS entry (Kafka's JaasOptionsUtils: exactly one, e.g.
 *   `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`), whose
 *   options configure the unsecured validator (`unsecuredValidator*`).
 * - Each sasl.oauthbearer.* key (ts/config/broker-configs.ts) with Kafka's listener and mechanism
 *   prefixes, parsed and checked by the config table.
 *
 * Settings are checked when the broker starts (a ConfigError stops it, as Kafka's configure()
 * does). The JWKS is fetched in the background from then on: unlike Kafka, a JWKS endpoint that is
 * down at start does not stop the broker; tokens are refused (`invalid_token`) and the fetch is
 * tried again at the next authentication until it succeeds.
 */
import { BROKER_CONFIG_KEY } from '../config/broker-configs.js'
import { ConfigError } from '../config/config-def.js'
import type { Logger } from '../logger.js'
import type { JaasEntry } from '../security/jaas-config.js'
import { checkBrokerJwtValidatorOptions } from '../security/oauthbearer/broker-jwt-validator.js'
import { oauthBearerSaslServerFactory } from '../security/oauthbearer/oauthbearer-sasl-server.js'
import { invalidToken, OAuthBearerConfigError, type OAuthBearerValidationResult, type OAuthBearerValidator } from '../security/oauthbearer/oauthbearer-token.js'
import { unsecuredValidatorOptions } from '../security/oauthbearer/oauthbearer-unsecured-validator.js'
import { checkJwksUrl, createOAuthBearerValidator, validatorKindOf, type OAuthBearerValidatorConfig } from '../security/oauthbearer/oauthbearer-validator-factory.js'
import type { SaslServerFactory } from '../security/sasl-server.js'

/** What OAUTHBEARER reads of a listener (sasl-mechanisms.ts's SaslMechanismSetup has it). */
export interface OAuthBearerListenerSetup {
  listenerName: string
  /** The mechanism's JAAS entries on this listener. */
  jaas: readonly JaasEntry[]
  /** A config's text with the listener's and mechanism's prefixes; undefined when unset. */
  config(name: string): string | undefined
  logger: Logger
}

function typed<T>(setup: OAuthBearerListenerSetup, name: string): T {
  const key = BROKER_CONFIG_KEY.get(name)
  if (!key) throw new Error(`${name} is not in the broker config table`)
  const text = setup.config(name)
  return (text === undefined ? key.default : key.value.parse(text, name)) as T
}

function asConfigError<T>(f: () => T): T {
  try {
    return f()
  } catch (err) {
    if (err instanceof OAuthBearerConfigError) throw new ConfigError(err.message)
    throw err
  }
}

/** The validator settings of OAUTHBEARER on a listener; a ConfigError when they cannot work. */
export function oauthBearerValidatorConfig(setup: OAuthBearerListenerSetup): OAuthBearerValidatorConfig {
  if (setup.jaas.length !== 1) throw new ConfigError(`Must supply exactly 1 non-null JAAS mechanism configuration for OAUTHBEARER on listener ${setup.listenerName} (size was ${setup.jaas.length})`)
  const kind = asConfigError(() => validatorKindOf(setup.config('sasl.server.callback.handler.class')))
  if (kind === 'unsecured') {
    const jaasOptions = Object.fromEntries(setup.jaas[0]!.options)
    asConfigError(() => unsecuredValidatorOptions(jaasOptions))
    return { kind, jaasOptions }
  }
  const config: OAuthBearerValidatorConfig = {
    kind,
    jwksEndpointUrl: typed(setup, 'sasl.oauthbearer.jwks.endpoint.url'),
    refreshMs: typed(setup, 'sasl.oauthbearer.jwks.endpoint.refresh.ms'),
    retryBackoffMs: typed(setup, 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms'),
    retryBackoffMaxMs: typed(setup, 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms'),
    allowedUrls: typed(setup, 'org.apache.kafka.sasl.oauthbearer.allowed.urls'),
    validator: {
      expectedAudience: typed(setup, 'sasl.oauthbearer.expected.audience'),
      expectedIssuer: typed(setup, 'sasl.oauthbearer.expected.issuer'),
      allowUnverifiedAudience: typed(setup, 'sasl.oauthbearer.allow.unverified.audience'),
      allowUnverifiedIssuer: typed(setup, 'sasl.oauthbearer.allow.unverified.issuer'),
      clockSkewSeconds: typed(setup, 'sasl.oauthbearer.clock.skew.seconds'),
      scopeClaimName: typed(setup, 'sasl.oauthbearer.scope.claim.name'),
      subClaimName: typed(setup, 'sasl.oauthbearer.sub.claim.name'),
      requiredScope: typed(setup, 'sasl.oauthbearer.expected.scope'),
    },
  }
  if (!config.jwksEndpointUrl) throw new ConfigError(`OAUTHBEARER on listener ${setup.listenerName} uses the JWKS validator but sasl.oauthbearer.jwks.endpoint.url is not set`)
  asConfigError(() => checkJwksUrl(config.jwksEndpointUrl!, config.allowedUrls))
  asConfigError(() => checkBrokerJwtValidatorOptions(config.validator))
  return config
}

/** A validator made in the background; made again at the next use after a failure. */
class StartingValidator implements OAuthBearerValidator {
  private ready: Promise<OAuthBearerValidator> | undefined

  constructor(
    private readonly config: OAuthBearerValidatorConfig,
    private readonly logger: Logger,
  ) {
    void this.start().catch(() => {})
  }

  async validate(tokenValue: string): Promise<OAuthBearerValidationResult> {
    let validator: OAuthBearerValidator
    try {
      validator = await this.start()
    } catch (err) {
      return invalidToken(`The OAuth validator could not start: ${(err as Error).message}`)
    }
    return validator.validate(tokenValue)
  }

  close(): void {
    void this.ready?.then(
      (v) => v.close(),
      () => {},
    )
  }

  private start(): Promise<OAuthBearerValidator> {
    this.ready ??= createOAuthBearerValidator(this.config, this.logger).catch((err: Error) => {
      this.logger.error('OAUTHBEARER validator could not start; tokens are refused until it does', { error: err.message })
      this.ready = undefined
      throw err
    })
    return this.ready
  }
}

/** OAUTHBEARER's SaslServerFactory for a listener (its settings checked now). */
export function oauthBearerMechanism(setup: OAuthBearerListenerSetup): SaslServerFactory {
  const config = oauthBearerValidatorConfig(setup)
  const logger = setup.logger.child({ mechanism: 'OAUTHBEARER' })
  return oauthBearerSaslServerFactory(new StartingValidator(config, logger), logger)
}
