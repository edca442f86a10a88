/**
 * How a broker of a cluster secures its connections to the other brokers: the follower fetchers
 * (ts/replica/replica-fetcher-thread.ts), the transaction coordinator's WriteTxnMarkers
 * (transaction-marker-channel-manager.ts) and a leader's AddPartitionsToTxn verification
 * (add-partitions-to-txn-manager.ts). As Kafka's inter-broker channel
 * (ChannelBuilders.clientChannelBuilder on the inter-broker listener with JaasContext.Type.SERVER):
 * the client speaks the security protocol of the inter-broker listener (inter.broker.listener.name,
 * or security.inter.broker.protocol) with that listener's own settings.
 *
 * - TLS (SSL, SASL_SSL): the listener's `ssl.*` (its `listener.name.<l>.ssl.*` first, dynamic
 *   layers first): its trust store is what the other brokers' certificates must chain to (none:
 *   Node's default roots, as Java's default trust store in Kafka); its key store is presented as
 *   the client certificate when the other broker asks for one (ssl.client.auth); ssl.key.password
 *   decrypts its key. `ssl.endpoint.identification.algorithm` (https by default, as Kafka's):
 *   the other broker's certificate must name the host it is reached at; empty: not checked.
 * - SASL (SASL_PLAINTEXT, SASL_SSL): `sasl.mechanism.inter.broker.protocol`, which must be one of
 *   the listener's enabled mechanisms (Kafka's check and message); the credentials are the
 *   options of that mechanism's login module on the listener, the very JAAS entry the server side
 *   reads (`listener.name.<l>.<mechanism>.sasl.jaas.config`, else the JAAS file's
 *   `<l>.KafkaServer` or `KafkaServer`): `username` and `password` of PlainLoginModule (next to
 *   its `user_<name>` entries) or ScramLoginModule. For OAUTHBEARER, as a Kafka broker
 *   configured for OIDC between brokers: with `sasl.oauthbearer.token.endpoint.url` (listener and
 *   mechanism prefixes apply, as to every key below) and a client id and secret
 *   (`sasl.oauthbearer.client.credentials.client.id` / `.client.secret`, else
 *   OAuthBearerLoginModule's `clientId` / `clientSecret` JAAS options; `scope` likewise), or with
 *   `sasl.login.callback.handler.class=...OAuthBearerLoginCallbackHandler`, a token from that
 *   OAuth server by the client credentials grant, kept fresh (ts/client/oauth-bearer-login-config.ts;
 *   the URL must be listed in `org.apache.kafka.sasl.oauthbearer.allowed.urls`); otherwise the
 *   unsecured token of OAuthBearerLoginModule's `unsecuredLoginStringClaim_sub`.
 *
 * The principal the other brokers see is the one these credentials (or, over SSL without SASL,
 * the certificate) make: with an authorizer it must be a super user or hold CLUSTER_ACTION on the
 * cluster, as in Kafka (follower fetches without it are refused TOPIC_AUTHORIZATION_FAILED).
 *
 * Everything is checked when the broker starts: a ConfigError naming the key, never a password.
 */
import { clientSecurityFrom, type ClientSecurity } from '../client/client-security.js'
import { KafkaClientError } from '../client/errors.js'
import { isSaslMechanism } from '../client/sasl/sasl-client.js'
import type { BrokerConfig } from '../config/broker-configs.js'
import { ConfigError } from '../config/config-def.js'
import { jaasQuote, type JaasEntry } from '../security/jaas-config.js'
import { ALLOWED_URLS, LOGIN_CALLBACK_HANDLER } from '../client/oauth-bearer-login-config.js'
import { isSecurityProtocol, usesSasl, usesTls } from '../security/security-protocol.js'
import { interBrokerListenerName, listenerConfigPrefix, listenerSslSettings } from './listeners.js'
import { listenerConfig, listenerMechanismJaas, listenerSaslMechanisms } from './sasl-mechanisms.js'

const LOGIN_MODULES: Readonly<Record<string, string>> = {
  PLAIN: 'org.apache.kafka.common.security.plain.PlainLoginModule',
  'SCRAM-SHA-256': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  'SCRAM-SHA-512': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  OAUTHBEARER: 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule',
}

const ENDPOINT_IDENTIFICATION = 'ssl.endpoint.identification.algorithm'

/**
 * The client security of this broker's connections to the other brokers (see the module
 * comment); `dynamic`: the dynamic config layers that may hold `listener.name.<l>.ssl.*`, most
 * specific first.
 */
export function interBrokerClientSecurity(config: BrokerConfig, dynamic: ReadonlyArray<Readonly<Record<string, string>>> = []): ClientSecurity {
  const listenerName = interBrokerListenerName(config)
  const protocol = config.listenerSecurityProtocolMap[listenerName]
  if (protocol === undefined || !isSecurityProtocol(protocol)) throw new ConfigError(`No security protocol defined for the inter-broker listener ${listenerName}`)
  const settings: Record<string, unknown> = { 'security.protocol': protocol }
  if (usesTls(protocol)) Object.assign(settings, tlsSettings(config, listenerName, dynamic))
  if (usesSasl(protocol)) Object.assign(settings, saslSettings(config, listenerName))
  try {
    return clientSecurityFrom(settings)
  } catch (err) {
    if (err instanceof KafkaClientError) throw new ConfigError(`inter-broker listener ${listenerName}: ${err.message}`)
    throw err
  }
}

function tlsSettings(config: BrokerConfig, listenerName: string, dynamic: ReadonlyArray<Readonly<Record<string, string>>>): Record<string, string | undefined> {
  const ssl = listenerSslSettings(config, listenerName, dynamic)
  const out: Record<string, string | undefined> = {}
  for (const name of ['ssl.truststore.location', 'ssl.truststore.certificates', 'ssl.keystore.location', 'ssl.keystore.key', 'ssl.keystore.certificate.chain', 'ssl.key.password']) {
    out[name] = ssl[name]
  }
  // The store types only with a store: JKS (the default) without one means "none given".
  if (out['ssl.truststore.location'] !== undefined || out['ssl.truststore.certificates'] !== undefined) out['ssl.truststore.type'] = ssl['ssl.truststore.type']
  if (out['ssl.keystore.location'] !== undefined || out['ssl.keystore.key'] !== undefined) out['ssl.keystore.type'] = ssl['ssl.keystore.type']
  // An empty value turns the check off, so it is looked up here (listenerSslSettings drops empty values).
  const prefix = listenerConfigPrefix(listenerName)
  const algorithm = [...dynamic.map((layer) => layer[prefix + ENDPOINT_IDENTIFICATION]), config.listenerOverrides[prefix + ENDPOINT_IDENTIFICATION], config.ssl[ENDPOINT_IDENTIFICATION]].find(
    (v) => v !== undefined && v !== null,
  )
  out[ENDPOINT_IDENTIFICATION] = algorithm ?? 'https'
  return out
}

function saslSettings(config: BrokerConfig, listenerName: string): Record<string, unknown> {
  const mechanism = config.saslMechanismInterBrokerProtocol
  if (!listenerSaslMechanisms(config, listenerName).includes(mechanism)) {
    throw new ConfigError('sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when SASL is used for inter-broker communication')
  }
  if (!isSaslMechanism(mechanism)) {
    throw new ConfigError(`sasl.mechanism.inter.broker.protocol ${mechanism} is not supported (ferrolog's brokers authenticate to each other with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER)`)
  }
  const where = `listener.name.${listenerName.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config`
  const entries = listenerMechanismJaas(config, listenerName, mechanism)
  const entry: JaasEntry | undefined = entries?.find((e) => e.loginModule === LOGIN_MODULES[mechanism])
  if (!entry) throw new ConfigError(`${where} (or the JAAS file's ${listenerName.toLowerCase()}.KafkaServer or KafkaServer): no ${LOGIN_MODULES[mechanism]} for the inter-broker client's credentials`)
  if (mechanism === 'OAUTHBEARER') {
    const login = oauthLoginSettings(config, listenerName, entry)
    if (login) return login
    const principal = entry.options.get('unsecuredLoginStringClaim_sub')
    if (!principal)
      throw new ConfigError(
        `${where}: the inter-broker client needs clientId and clientSecret with sasl.oauthbearer.token.endpoint.url (a token from an OAuth server), or unsecuredLoginStringClaim_sub (an unsecured token)`,
      )
    const fields = [`principal=${principal}`]
    // unsecuredLoginListClaim_scope: its first character separates the items.
    const scope = entry.options.get('unsecuredLoginListClaim_scope')
    if (scope)
      fields.push(
        `scope=${scope
          .slice(1)
          .split(scope[0]!)
          .filter((s) => s !== '')
          .join(',')}`,
      )
    const life = entry.options.get('unsecuredLoginLifetimeSeconds')
    if (life) fields.push(`lifeSeconds=${life}`)
    return { 'sasl.mechanism': mechanism, 'enable.sasl.oauthbearer.unsecure.jwt': true, 'sasl.oauthbearer.config': fields.join(' ') }
  }
  const username = entry.options.get('username')
  const password = entry.options.get('password')
  if (username === undefined || password === undefined) throw new ConfigError(`${where}: the inter-broker client needs the login module's username and password options`)
  return { 'sasl.mechanism': mechanism, 'sasl.username': username, 'sasl.password': password }
}

/**
 * The inter-broker client's OAuth login settings (client-security.ts's names) when the listener
 * asks for one (see the module comment); undefined for the unsecured token.
 */
function oauthLoginSettings(config: BrokerConfig, listenerName: string, entry: JaasEntry): Record<string, unknown> | undefined {
  const lookup = listenerConfig(config, listenerName, 'OAUTHBEARER')
  const handler = lookup('sasl.login.callback.handler.class')
  const endpoint = lookup('sasl.oauthbearer.token.endpoint.url')
  const clientId = lookup('sasl.oauthbearer.client.credentials.client.id') ?? entry.options.get('clientId')
  const clientSecret = lookup('sasl.oauthbearer.client.credentials.client.secret') ?? entry.options.get('clientSecret')
  if (handler !== LOGIN_CALLBACK_HANDLER && !(endpoint && clientId && clientSecret)) return undefined
  // The entry goes along whole: its clientId, clientSecret, scope, extension_* and ssl.* options.
  const jaas = `${entry.loginModule} required${[...entry.options].map(([k, v]) => ` ${k}=${jaasQuote(v)}`).join('')};`
  return {
    'sasl.mechanism': 'OAUTHBEARER',
    'sasl.login.callback.handler.class': LOGIN_CALLBACK_HANDLER,
    'sasl.jaas.config': jaas,
    'sasl.oauthbearer.token.endpoint.url': endpoint,
    'sasl.oauthbearer.client.credentials.client.id': lookup('sasl.oauthbearer.client.credentials.client.id'),
    'sasl.oauthbearer.client.credentials.client.secret': lookup('sasl.oauthbearer.client.credentials.client.secret'),
    'sasl.oauthbearer.scope': lookup('sasl.oauthbearer.scope'),
    'sasl.oauthbearer.sub.claim.name': lookup('sasl.oauthbearer.sub.claim.name'),
    'sasl.oauthbearer.scope.claim.name': lookup('sasl.oauthbearer.scope.claim.name'),
    [ALLOWED_URLS]: lookup(ALLOWED_URLS) ?? '',
  }
}
