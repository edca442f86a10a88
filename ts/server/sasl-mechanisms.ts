/**
 * The SASL mechanisms the broker serves, and the authenticator of each SASL listener.
 *
 * `SASL_MECHANISMS` is the registry: a mechanism's name and how to make its SaslServerFactory for
 * one listener (its JAAS entries, its configs with Kafka's listener and mechanism prefixes, the
 * broker). Adding a mechanism is one line there. A SASL listener enables
 * `listener.name.<listener>.sasl.enabled.mechanisms`, else `sasl.enabled.mechanisms`; naming one
 * that is not registered is a ConfigError at start (Kafka fails likewise on a mechanism it cannot
 * configure).
 *
 * A mechanism's JAAS entries (Kafka's JaasContext.loadServerContext):
 * `listener.name.<listener>.<mechanism>.sasl.jaas.config` (names lower case), else the context
 * `<listener>.KafkaServer`, else `KafkaServer`, of the JAAS file
 * (`java.security.auth.login.config`). An unprefixed `sasl.jaas.config` is ignored with a warning,
 * as Kafka's broker ignores it.
 */
import { readFileSync } from 'node:fs'
import { BROKER_CONFIG_KEY, type BrokerConfig } from '../config/broker-configs.js'
import { ConfigError } from '../config/config-def.js'
import type { Logger } from '../logger.js'
import type { Authenticator, Connection, ListenerInfo } from '../network/connection.js'
import { SaslServerAuthenticator } from '../network/sasl-server-authenticator.js'
import { JaasConfigError, parseJaasConfig, parseJaasFile, type JaasEntry } from '../security/jaas-config.js'
import { PLAIN_MECHANISM, plainCredentialsFromJaas, plainSaslServerFactory } from '../security/plain/plain-sasl-server.js'
import { OAUTHBEARER_MECHANISM } from '../security/oauthbearer/oauthbearer-sasl-server.js'
import { oauthBearerMechanism } from './oauthbearer-config.js'
import type { SaslServerFactory } from '../security/sasl-server.js'
import { usesSasl } from '../security/security-protocol.js'
import { SCRAM_MECHANISMS } from '../security/scram/scram-mechanism.js'
import { scramSaslServerFactory } from '../security/scram/scram-sasl-server.js'
import type { BrokerContext } from './handlers/broker-context.js'

/** What a mechanism's factory is made from, for one listener. */
export interface SaslMechanismSetup {
  listenerName: string
  mechanism: string
  /** The mechanism's JAAS entries on this listener (see the module comment); null when none is configured. */
  jaas: JaasEntry[] | null
  /**
   * A config's text as this listener and mechanism see it: `listener.name.<l>.<mechanism>.<name>`,
   * else `listener.name.<l>.<name>`, else the broker's own (names lower case); undefined when unset.
   */
  config(name: string): string | undefined
  broker: BrokerContext
  logger: Logger
}

export type SaslMechanismProvider = (setup: SaslMechanismSetup) => SaslServerFactory

/** Refuses a mechanism without JAAS entries, with Kafka's message. */
export function requireJaas(setup: SaslMechanismSetup): JaasEntry[] {
  if (setup.jaas) return setup.jaas
  const l = setup.listenerName.toLowerCase()
  throw new ConfigError(
    `Could not find a '${l}.KafkaServer' or 'KafkaServer' entry in the JAAS configuration for ${setup.mechanism} on listener ${setup.listenerName}: set listener.name.${l}.${setup.mechanism.toLowerCase()}.sasl.jaas.config or java.security.auth.login.config`,
  )
}

/** Every mechanism the broker serves. One line each. */
export const SASL_MECHANISMS: Readonly<Record<string, SaslMechanismProvider>> = {
  [PLAIN_MECHANISM]: (setup) => plainSaslServerFactory(plainCredentialsFromJaas(requireJaas(setup))),
  ...Object.fromEntries(SCRAM_MECHANISMS.map((m) => [m.mechanismName, (setup: SaslMechanismSetup) => scramSaslServerFactory(m, setup.broker.scramCredentials.cache)])),
  [OAUTHBEARER_MECHANISM]: (setup) => oauthBearerMechanism({ ...setup, jaas: requireJaas(setup) }),
}

function listenerPrefix(listenerName: string): string {
  return `listener.name.${listenerName.toLowerCase()}.`
}

/** A config's text with Kafka's listener (and mechanism) prefixes. */
export function listenerConfig(config: BrokerConfig, listenerName: string, mechanism: string | null): (name: string) => string | undefined {
  const prefix = listenerPrefix(listenerName)
  return (name) => {
    if (mechanism !== null) {
      const own = config.listenerOverrides[`${prefix}${mechanism.toLowerCase()}.${name}`]
      if (own !== undefined) return own
    }
    const listenerOwn = config.listenerOverrides[prefix + name]
    if (listenerOwn !== undefined) return listenerOwn
    const key = BROKER_CONFIG_KEY.get(name)
    if (!key) return undefined
    const value = key.get(config)
    return value === null || value === undefined ? undefined : key.value.format(value)
  }
}

/** A value through the config table's type and validator (an override is checked as the key is). */
function typed<T>(lookup: (name: string) => string | undefined, name: string, config: BrokerConfig): T {
  const key = BROKER_CONFIG_KEY.get(name)!
  const text = lookup(name)
  return (text === undefined ? key.get(config) : key.value.parse(text, name)) as T
}

function jaasFileContexts(config: BrokerConfig): Map<string, JaasEntry[]> | null {
  if (config.saslJaasFile === null) return null
  let text: string
  try {
    text = readFileSync(config.saslJaasFile, 'utf8')
  } catch (err) {
    throw new ConfigError(`java.security.auth.login.config: cannot read ${config.saslJaasFile}: ${(err as Error).message}`)
  }
  try {
    return parseJaasFile(text)
  } catch (err) {
    if (err instanceof JaasConfigError) throw new ConfigError(`java.security.auth.login.config ${config.saslJaasFile}: ${err.message}`)
    throw err
  }
}

/** The mechanisms a SASL listener enables: `listener.name.<listener>.sasl.enabled.mechanisms`, else `sasl.enabled.mechanisms`. */
export function listenerSaslMechanisms(config: BrokerConfig, listenerName: string): readonly string[] {
  return typed<readonly string[]>(listenerConfig(config, listenerName, null), 'sasl.enabled.mechanisms', config)
}

/** A mechanism's JAAS entries on a listener, as the server side reads them (see the module comment); null when none is configured. */
export function listenerMechanismJaas(config: BrokerConfig, listenerName: string, mechanism: string): JaasEntry[] | null {
  return mechanismJaas(config, listenerName, mechanism, jaasFileContexts(config))
}

function mechanismJaas(config: BrokerConfig, listenerName: string, mechanism: string, file: Map<string, JaasEntry[]> | null): JaasEntry[] | null {
  const name = `${listenerPrefix(listenerName)}${mechanism.toLowerCase()}.sasl.jaas.config`
  const text = config.listenerOverrides[name]
  if (text !== undefined) {
    try {
      return parseJaasConfig(text)
    } catch (err) {
      if (err instanceof JaasConfigError) throw new ConfigError(`${name}: ${err.message}`)
      throw err
    }
  }
  return file?.get(`${listenerName.toLowerCase()}.KafkaServer`) ?? file?.get('KafkaServer') ?? null
}

/**
 * The authenticator of each connection of `listener`, or null when the listener does not use
 * SASL. Reads and checks the listener's SASL settings now (a ConfigError for a mechanism not
 * served or not configured), so a broker with a bad setting does not start.
 */
export function saslAuthenticatorFactory(config: BrokerConfig, listener: ListenerInfo, broker: BrokerContext, logger: Logger): ((connection: Connection) => Authenticator) | null {
  if (!usesSasl(listener.securityProtocol)) return null
  const { listenerName } = listener
  const lookup = listenerConfig(config, listenerName, null)
  const enabled = listenerSaslMechanisms(config, listenerName)
  if (enabled.length === 0) throw new ConfigError(`No SASL mechanisms are enabled on listener ${listenerName} (sasl.enabled.mechanisms)`)
  if (config.saslJaasConfig !== null) logger.warn('Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config')
  const file = jaasFileContexts(config)
  const factories = new Map<string, SaslServerFactory>()
  const maxReauthMs = new Map<string, number>()
  for (const mechanism of enabled) {
    const provider = SASL_MECHANISMS[mechanism]
    if (!provider) throw new ConfigError(`SASL mechanism ${mechanism} enabled on listener ${listenerName} is not supported (ferrolog serves ${Object.keys(SASL_MECHANISMS).join(', ')})`)
    const mechanismConfig = listenerConfig(config, listenerName, mechanism)
    factories.set(mechanism, provider({ listenerName, mechanism, jaas: mechanismJaas(config, listenerName, mechanism, file), config: mechanismConfig, broker, logger }))
    maxReauthMs.set(mechanism, typed<number>(mechanismConfig, 'connections.max.reauth.ms', config))
  }
  const maxReceiveBytes = typed<number>(lookup, 'sasl.server.max.receive.size', config)
  const authLogger = logger.child({ listener: listenerName })
  return () =>
    new SaslServerAuthenticator({
      mechanisms: factories,
      maxReceiveBytes,
      failedAuthenticationDelayMs: config.failedAuthenticationDelayMs,
      connectionsMaxReauthMs: (mechanism) => maxReauthMs.get(mechanism) ?? 0,
      logger: authLogger,
    })
}
