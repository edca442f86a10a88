/**
 * The broker's listeners as Kafka's (KafkaConfig's listeners, advertised listeners and
 * inter-broker listener): `listeners=PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093`, each name
 * mapped to a security protocol by `listener.security.protocol.map`; one server socket each
 * (SocketServer per listener). `advertised.listeners` says what Metadata tells the clients of
 * each listener (default: `listeners`); a client is answered with the endpoints of the listener
 * it came in on. The inter-broker listener (`inter.broker.listener.name`, or the listener named
 * after `security.inter.broker.protocol`, PLAINTEXT by default) is the address a broker of a
 * cluster registers for the other brokers.
 *
 * Checked at start as Kafka checks them (ConfigError, with Kafka's messages): each listener a
 * different name and a different port (port 0 aside, and one IPv4 and one IPv6 host may share a
 * port), every name mapped to a known protocol, the advertised names among the listeners', the
 * inter-broker listener among the advertised ones, not both inter-broker settings, no advertised
 * 0.0.0.0.
 */
import { isIP } from 'node:net'
import { ConfigError } from '../config/config-def.js'
import { BROKER_CONFIG_KEYS, type BrokerConfig, type ListenerEndPoint } from '../config/broker-configs.js'
import type { ListenerInfo } from '../network/connection.js'
import { isSecurityProtocol, type SecurityProtocol } from '../security/security-protocol.js'
import { SslConfigError, sslServerConfig, type SslServerConfig, type SslSettings } from '../security/ssl-engine-factory.js'

/** One listener of the broker: where it listens, what it advertises, what it speaks. */
export interface BrokerListener extends ListenerInfo {
  host: string
  /** The port to bind (0: any free port). */
  port: number
  advertisedHost: string
  /** The port advertised; 0: the port bound. */
  advertisedPort: number
}

/** The listener's prefix of per-listener configs (Kafka's ListenerName.configPrefix). */
export function listenerConfigPrefix(listenerName: string): string {
  return `listener.name.${listenerName.toLowerCase()}.`
}

function securityProtocolOf(config: BrokerConfig, listenerName: string): SecurityProtocol {
  const protocol = config.listenerSecurityProtocolMap[listenerName]
  if (protocol === undefined) throw new ConfigError(`No security protocol defined for listener ${listenerName} (listener.security.protocol.map is ${formatMap(config.listenerSecurityProtocolMap)})`)
  if (!isSecurityProtocol(protocol))
    throw new ConfigError(`listener.security.protocol.map: unknown security protocol ${protocol} for listener ${listenerName} (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)`)
  return protocol
}

function formatMap(map: Record<string, string>): string {
  return Object.entries(map)
    .map(([k, v]) => `${k}:${v}`)
    .join(',')
}

function describe(list: ListenerEndPoint[]): string {
  return list.map((l) => `${l.listenerName}://${l.host}:${l.port}`).join(',')
}

/** Kafka's checks of `listeners` (CoreUtils.listenerListToEndPoints with distinct ports). */
function checkListeners(list: ListenerEndPoint[], what: string, distinctPorts: boolean): void {
  const names = new Set(list.map((l) => l.listenerName))
  if (names.size !== list.length) throw new ConfigError(`${what}: Each listener must have a different name, listeners: ${describe(list)}`)
  if (!distinctPorts) return
  const byPort = new Map<number, ListenerEndPoint[]>()
  for (const l of list) if (l.port !== 0) byPort.set(l.port, [...(byPort.get(l.port) ?? []), l])
  for (const [port, same] of byPort) {
    if (same.length < 2) continue
    // One IPv4 and one IPv6 address may share a port (Kafka's exception); nothing else may.
    const families = same.map((l) => isIP(l.host))
    const ok = same.length === 2 && families.includes(4) && families.includes(6)
    if (!ok) throw new ConfigError(`${what}: Each listener must have a different port, listeners: ${describe(list)}, port: ${port}`)
  }
}

/** The inter-broker listener's name (Kafka's getInterBrokerListenerNameAndSecurityProtocol). */
export function interBrokerListenerName(config: BrokerConfig): string {
  return config.interBrokerListenerName ?? config.securityInterBrokerProtocol
}

/**
 * Checks the listener settings (`props`: what was given, to tell a key set from its default) and
 * sets `advertisedHost`/`advertisedPort` to the inter-broker listener's advertised endpoint.
 */
export function resolveListeners(config: BrokerConfig, props: Record<string, string>): void {
  if (props['inter.broker.listener.name'] !== undefined && props['security.inter.broker.protocol'] !== undefined) {
    throw new ConfigError('Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.')
  }
  checkListeners(config.listeners, 'listeners', true)
  for (const l of config.listeners) securityProtocolOf(config, l.listenerName)
  const advertised = config.advertisedListeners ?? config.listeners
  if (config.advertisedListeners) {
    checkListeners(config.advertisedListeners, 'advertised.listeners', false)
    const names = new Set(config.listeners.map((l) => l.listenerName))
    const extra = config.advertisedListeners.filter((l) => !names.has(l.listenerName))
    if (extra.length > 0) {
      throw new ConfigError(
        `advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. Found ${config.advertisedListeners.map((l) => l.listenerName).join(',')}. The valid options based on the current configuration are ${[...names].join(',')}`,
      )
    }
  }
  if (advertised.some((l) => l.host === '0.0.0.0')) throw new ConfigError('advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.')
  const interBroker = interBrokerListenerName(config)
  if (config.interBrokerListenerName !== null && config.listenerSecurityProtocolMap[interBroker] === undefined) {
    throw new ConfigError(`Listener with name ${interBroker} defined in inter.broker.listener.name not found in listener.security.protocol.map.`)
  }
  const own = advertised.find((l) => l.listenerName === interBroker)
  // A broker alone (the common standalone case: `--listen` a SSL listener) needs no inter-broker
  // listener; a cluster needs one. Kafka requires it always: here only when it is set explicitly
  // or the broker joins a cluster.
  const required = config.clusterMetadata.length > 0 || props['inter.broker.listener.name'] !== undefined || props['security.inter.broker.protocol'] !== undefined
  if (!own && required) {
    throw new ConfigError(
      `inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options based on currently configured listeners are ${advertised.map((l) => l.listenerName).join(',')}`,
    )
  }
  const endpoint = advertised.find((l) => l.listenerName === registeredListenerName(config))!
  config.advertisedHost = endpoint.host
  config.advertisedPort = endpoint.port
}

/**
 * The listener whose advertised endpoint is the broker's address for the other brokers
 * (`advertisedHost`/`advertisedPort`): the inter-broker listener, or (a standalone broker
 * without one) the first advertised listener.
 */
export function registeredListenerName(config: BrokerConfig): string {
  const advertised = config.advertisedListeners ?? config.listeners
  const interBroker = interBrokerListenerName(config)
  return advertised.some((l) => l.listenerName === interBroker) ? interBroker : advertised[0]!.listenerName
}

/** The broker's listeners, in `listeners` order, each with its protocol and advertised endpoint. */
export function brokerListeners(config: BrokerConfig): BrokerListener[] {
  const advertised = config.advertisedListeners ?? config.listeners
  return config.listeners.map((l) => {
    const ad = advertised.find((a) => a.listenerName === l.listenerName)
    return {
      listenerName: l.listenerName,
      securityProtocol: securityProtocolOf(config, l.listenerName),
      host: l.host,
      port: l.port,
      // A listener not advertised keeps its own address (Kafka leaves it out of Metadata; here a
      // client that reached it is told where it is).
      advertisedHost: ad?.host ?? l.host,
      advertisedPort: ad?.port ?? l.port,
    }
  })
}

/** The `ssl.*` keys a TLS listener reads (ts/config/broker-configs.ts). */
const SSL_KEY_NAMES = BROKER_CONFIG_KEYS.filter((k) => k.reconfigure === 'ssl' || k.name.startsWith('ssl.')).map((k) => k.name)

/** A dynamic config name that changes a TLS listener's settings: `ssl.*` or `listener.name.<name>.ssl.*`. */
export function isSslConfigName(name: string): boolean {
  return name.startsWith('ssl.') || /^listener\.name\.[^.]+\.ssl\./.test(name)
}

/**
 * One listener's `ssl.*` settings, as text by Kafka's name, most specific first: its own
 * `listener.name.<name>.ssl.*` from the dynamic layers (this broker's, then the cluster-wide
 * default's), then from server.properties, then the plain `ssl.*` (whose dynamic values
 * `config.ssl` holds already).
 */
export function listenerSslSettings(config: BrokerConfig, listenerName: string, dynamic: ReadonlyArray<Readonly<Record<string, string>>> = []): SslSettings {
  const prefix = listenerConfigPrefix(listenerName)
  const out: Record<string, string | undefined> = {}
  for (const name of SSL_KEY_NAMES) {
    const own = [...dynamic.map((layer) => layer[prefix + name]), config.listenerOverrides[prefix + name]].find((v) => v !== undefined)
    const value = own ?? config.ssl[name] ?? undefined
    if (value !== undefined && value !== null && value !== '') out[name] = value
  }
  return out
}

/** The TLS server of a TLS listener from its settings; a ConfigError names the listener. */
export function listenerSslServer(config: BrokerConfig, listenerName: string, dynamic: ReadonlyArray<Readonly<Record<string, string>>> = []): SslServerConfig {
  try {
    return sslServerConfig(listenerSslSettings(config, listenerName, dynamic))
  } catch (err) {
    if (err instanceof SslConfigError) throw new ConfigError(`listener ${listenerName}: ${err.message}`)
    throw err
  }
}
