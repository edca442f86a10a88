/**
 * A secured embedded broker in one call (issue 26 item 6): `startBroker({ security })` turns the
 * option below into the broker configs a server.properties would hold (listener, TLS stores,
 * SASL mechanisms and their JAAS entries, authorizer, super users), then, once the broker runs,
 * stores the users' SCRAM credentials and the ACLs as `kafka-configs.sh` and `kafka-acls.sh`
 * would, and hands back each user's client settings for kafkajs, @platformatic/kafka, ferrolog's
 * own client and Kafka's Java clients.
 *
 *   security: {
 *     protocol: 'SASL_SSL',                      // or SASL_PLAINTEXT, SSL
 *     mechanisms: ['SCRAM-SHA-512', 'PLAIN'],    // sasl.enabled.mechanisms; default SCRAM-SHA-512, SCRAM-SHA-256, PLAIN
 *     users: { alice: 'alice-secret' },          // SCRAM credentials and PLAIN users (SSL: names only)
 *     superUsers: ['admin'],                     // super.users; with acls, turns the StandardAuthorizer on
 *     acls: [{ principal: 'User:alice', operation: 'READ', resourceType: 'TOPIC', name: 'orders' }],
 *     clientAuth: 'required',                    // ssl.client.auth; each user gets a client certificate
 *     ca: createCertificateAuthority(),          // default: a throw-away CA made here
 *   }
 *
 * Kafka's names underneath: what this writes is listed by `securityConfigs` and can be given in
 * `config` instead (a key given there wins). The TLS material stays in memory (PEM given inline,
 * `ssl.keystore.key` / `ssl.keystore.certificate.chain` / `ssl.truststore.certificates`): nothing
 * is written outside the data dir. Passwords reach the broker only as a PLAIN JAAS entry (as in a
 * server.properties) and as SCRAM credentials (salt, StoredKey, ServerKey); none is logged.
 */
import { unsecuredJwt } from '../client/sasl/oauth-bearer-sasl-client.js'
import { ConfigError } from '../config/config-def.js'
import { parseAcls } from '../security/authorizer/acl-json.js'
import type { AclBinding } from '../security/authorizer/acl.js'
import { STANDARD_AUTHORIZER_CLASS } from '../security/authorizer/standard-authorizer.js'
import { createCertificateAuthority, type CertificateAuthority, type IssuedCertificate } from '../security/certificates.js'
import { jaasQuote } from '../security/jaas-config.js'
import { usesSasl, usesTls } from '../security/security-protocol.js'
import type { ScramCredentialChange } from '../security/scram/scram-control-manager.js'
import { ScramFormatter } from '../security/scram/scram-formatter.js'
import { scramMechanismForName } from '../security/scram/scram-mechanism.js'
import type { Broker } from './broker.js'

export type EmbeddedSecurityProtocol = 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL'
export type EmbeddedSaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'OAUTHBEARER'

/** An ACL as `kafka-acls.sh --add` makes it, by Kafka's enum names (the ACL file's format, ts/security/authorizer/acl-json.ts). */
export interface EmbeddedAcl {
  /** `User:alice`, or `User:*`. */
  principal: string
  /** READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALL, ... */
  operation: string
  /** TOPIC, GROUP, CLUSTER (named `kafka-cluster`), TRANSACTIONAL_ID, ... */
  resourceType: string
  name: string
  /** LITERAL (default) or PREFIXED. */
  patternType?: string
  /** ALLOW (default) or DENY. */
  permissionType?: string
  /** Default `*`. */
  host?: string
}

export interface EmbeddedSecurityOptions {
  /** The listener's security protocol (the listener is named after it). */
  protocol: EmbeddedSecurityProtocol
  /** sasl.enabled.mechanisms; default SCRAM-SHA-512, SCRAM-SHA-256, PLAIN. OAUTHBEARER validates unsecured tokens (Kafka's default validator). */
  mechanisms?: readonly EmbeddedSaslMechanism[]
  /**
   * The users: name to password for SASL (a SCRAM credential of each SCRAM mechanism, 4096
   * iterations, and a PLAIN user); with a client certificate (`clientAuth`), each also gets one
   * whose subject is `CN=<name>`, mapped to `User:<name>`. A list of names: SSL or OAUTHBEARER only.
   */
  users?: Readonly<Record<string, string>> | readonly string[]
  /** super.users, as user names (`admin`) or principals (`User:admin`). */
  superUsers?: readonly string[]
  /** ACLs to create; `acls` or `superUsers` turn authorization on (Kafka's StandardAuthorizer). */
  acls?: readonly EmbeddedAcl[]
  /** ssl.client.auth; default `required` for SSL with users, `none` otherwise. */
  clientAuth?: 'required' | 'requested' | 'none'
  /** The CA that signs the broker's certificate and the users' (createCertificateAuthority()); default a new throw-away one. */
  ca?: CertificateAuthority
}

/** What a client needs to reach the secured broker as one user, in each client's own option names. */
export interface EmbeddedClientSettings {
  bootstrapServers: string
  securityProtocol: EmbeddedSecurityProtocol
  /** SASL only. */
  mechanism?: EmbeddedSaslMechanism
  username?: string
  password?: string
  /** The CA certificate (PEM) the broker's certificate chains to; TLS only. */
  caPem?: string
  /** The user's client certificate and key (PEM), with `clientAuth`. */
  certificatePem?: string
  keyPem?: string
  /** kafkajs: `new Kafka({ clientId, ...settings.kafkajs })`. */
  kafkajs: {
    brokers: string[]
    ssl?: { ca: string[]; cert?: string; key?: string }
    sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string } | { mechanism: 'oauthbearer'; oauthBearerProvider: () => Promise<{ value: string }> }
  }
  /** @platformatic/kafka: `new Producer({ clientId, ...settings.platformatic })`. */
  platformatic: {
    bootstrapBrokers: string[]
    tls?: { ca: string; cert?: string; key?: string }
    sasl?: { mechanism: EmbeddedSaslMechanism; username?: string; password?: string; token?: () => string }
  }
  /** ferrolog's Consumer and NetworkClient (`clientSecurityFrom`), by Kafka's and librdkafka's names. */
  ferrolog: {
    bootstrapServers: string
    'security.protocol': EmbeddedSecurityProtocol
    'ssl.ca.pem'?: string
    'ssl.certificate.pem'?: string
    'ssl.key.pem'?: string
    'sasl.mechanism'?: EmbeddedSaslMechanism
    'sasl.username'?: string
    'sasl.password'?: string
    oauthBearerProvider?: () => Promise<{ value: string }>
  }
  /** Kafka's Java clients and tools (a client.properties: `formatJavaProperties(settings.java)`). */
  java: Record<string, string>
}

export interface EmbeddedSecurity {
  readonly protocol: EmbeddedSecurityProtocol
  readonly mechanisms: readonly EmbeddedSaslMechanism[]
  /** The CA (PEM) clients trust; undefined for SASL_PLAINTEXT. */
  readonly caPem: string | undefined
  /** The CA itself (to issue more client certificates); undefined for SASL_PLAINTEXT. */
  readonly ca: CertificateAuthority | undefined
  readonly users: readonly string[]
  /** A user's client settings (default the first user) for a mechanism (default the first enabled). */
  clientSettings(user?: string, mechanism?: EmbeddedSaslMechanism): EmbeddedClientSettings
}

/** A broker started with `security`: the broker, and what its clients need. */
export type SecuredBroker = Broker & { readonly security: EmbeddedSecurity }

const DEFAULT_MECHANISMS: readonly EmbeddedSaslMechanism[] = ['SCRAM-SHA-512', 'SCRAM-SHA-256', 'PLAIN']
const PASSWORD_MECHANISMS = new Set<string>(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'])
const KNOWN_MECHANISMS = new Set<string>([...PASSWORD_MECHANISMS, 'OAUTHBEARER'])
/** Kafka's default (ScramMechanism.minIterations), as `kafka-configs.sh` writes without `iterations=`. */
const SCRAM_ITERATIONS = 4096
/** A client certificate `CN=<user>` is the principal `User:<user>` (Kafka's own would be `User:CN=<user>`). */
const CN_RULE = 'RULE:^CN=([^,]+)$/$1/,DEFAULT'

const LOGIN_MODULE: Record<EmbeddedSaslMechanism, string> = {
  PLAIN: 'org.apache.kafka.common.security.plain.PlainLoginModule',
  'SCRAM-SHA-256': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  'SCRAM-SHA-512': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  OAUTHBEARER: 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule',
}

/** The broker configs of `security` and what to do once the broker runs. */
export interface PreparedSecurity {
  /** Broker configs by Kafka's names (a key the caller's `config` sets is left to it). */
  configs: Record<string, string>
  /** Stores the SCRAM credentials and ACLs in the running broker and returns its `security`. */
  apply(broker: Broker): Promise<EmbeddedSecurity>
}

function userList(users: EmbeddedSecurityOptions['users']): { names: string[]; passwords: Map<string, string> | null } {
  if (users === undefined) return { names: [], passwords: new Map() }
  if (Array.isArray(users)) return { names: [...(users as readonly string[])], passwords: null }
  const record = users as Readonly<Record<string, string>>
  return { names: Object.keys(record), passwords: new Map(Object.entries(record)) }
}

function principal(name: string): string {
  return /^[A-Za-z]+:/.test(name) ? name : `User:${name}`
}

/** The listener names of a `listeners` value (`SASL_SSL://host:port,...`): each gets the mechanisms' JAAS entries. */
function listenerNames(listeners: string): string[] {
  return [...listeners.matchAll(/(?:^|,)\s*([A-Za-z0-9_]+):\/\//g)].map((m) => (m[1] ?? '').toLowerCase())
}

/**
 * Checks `options` and makes the configs; `listeners` is the broker's listeners value, `host` the
 * address its certificate must name.
 */
export function prepareSecurity(options: EmbeddedSecurityOptions, listeners: string, host: string): PreparedSecurity {
  const { protocol } = options
  if (protocol !== 'SSL' && protocol !== 'SASL_PLAINTEXT' && protocol !== 'SASL_SSL') {
    throw new ConfigError(`startBroker security.protocol must be SSL, SASL_PLAINTEXT or SASL_SSL, not ${String(protocol)}`)
  }
  const sasl = usesSasl(protocol)
  const tls = usesTls(protocol)
  const mechanisms = sasl ? [...(options.mechanisms ?? DEFAULT_MECHANISMS)] : []
  if (sasl && mechanisms.length === 0) throw new ConfigError('startBroker security.mechanisms must name at least one mechanism')
  for (const m of mechanisms) if (!KNOWN_MECHANISMS.has(m)) throw new ConfigError(`startBroker security.mechanisms: ${m} is not served (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)`)
  if (!sasl && options.mechanisms !== undefined) throw new ConfigError(`startBroker security.mechanisms needs a SASL protocol, not ${protocol}`)
  const { names, passwords } = userList(options.users)
  if (passwords === null && mechanisms.some((m) => PASSWORD_MECHANISMS.has(m))) {
    throw new ConfigError(`startBroker security.users must give passwords ({ name: password }) for ${mechanisms.filter((m) => PASSWORD_MECHANISMS.has(m)).join(', ')}`)
  }
  for (const name of names) if (name.length === 0) throw new ConfigError('startBroker security.users: a user name must not be empty')
  const clientAuth = options.clientAuth ?? (protocol === 'SSL' && names.length > 0 ? 'required' : 'none')
  if (!tls && options.clientAuth !== undefined) throw new ConfigError(`startBroker security.clientAuth needs SSL or SASL_SSL, not ${protocol}`)
  const acls: AclBinding[] = parseAcls(
    JSON.stringify({
      version: 1,
      acls: (options.acls ?? []).map((a) => ({ patternType: 'LITERAL', permissionType: 'ALLOW', host: '*', ...a })),
    }),
    'startBroker security.acls',
  )
  const authorize = options.acls !== undefined || options.superUsers !== undefined

  const configs: Record<string, string> = {}
  const ca = tls ? (options.ca ?? createCertificateAuthority({ commonName: 'ferrolog embedded broker CA' })) : undefined
  const clientCertificates = new Map<string, IssuedCertificate>()
  if (ca) {
    const ip = /^[0-9.]+$|:/.test(host)
    const server = ca.issue({
      subject: { CN: 'localhost' },
      dnsNames: ['localhost', ...(ip || host === 'localhost' ? [] : [host])],
      ipAddresses: ['127.0.0.1', ...(ip && host !== '127.0.0.1' ? [host] : [])],
      usage: 'server',
    })
    Object.assign(configs, {
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.key': server.keyPem,
      'ssl.keystore.certificate.chain': server.chainPem,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.certificates': ca.certificatePem,
      'ssl.client.auth': clientAuth,
    })
    if (clientAuth !== 'none') {
      configs['ssl.principal.mapping.rules'] = CN_RULE
      for (const name of names) clientCertificates.set(name, ca.issue({ subject: { CN: name }, usage: 'client' }))
    }
  }
  if (sasl) {
    configs['sasl.enabled.mechanisms'] = mechanisms.join(',')
    for (const listener of listenerNames(listeners)) {
      if (mechanisms.includes('PLAIN')) {
        const users = [...(passwords ?? [])].map(([name, password]) => ` ${jaasQuote(`user_${name}`)}=${jaasQuote(password)}`).join('')
        configs[`listener.name.${listener}.plain.sasl.jaas.config`] = `${LOGIN_MODULE.PLAIN} required${users};`
      }
      if (mechanisms.includes('OAUTHBEARER')) configs[`listener.name.${listener}.oauthbearer.sasl.jaas.config`] = `${LOGIN_MODULE.OAUTHBEARER} required;`
    }
  }
  if (authorize) {
    configs['authorizer.class.name'] = STANDARD_AUTHORIZER_CLASS
    configs['super.users'] = (options.superUsers ?? []).map(principal).join(';')
  }

  return {
    configs,
    async apply(broker: Broker): Promise<EmbeddedSecurity> {
      const scram = mechanisms.map((m) => scramMechanismForName(m)).filter((m) => m !== undefined)
      if (scram.length > 0 && passwords !== null && passwords.size > 0) {
        await broker.scramCredentials.update(() => {
          const changes: ScramCredentialChange[] = []
          for (const m of scram) {
            const formatter = new ScramFormatter(m)
            for (const [username, password] of passwords) changes.push({ mechanismName: m.mechanismName, username, credential: formatter.generateCredential(password, SCRAM_ITERATIONS) })
          }
          return { changes, result: undefined }
        })
      }
      if (acls.length > 0) {
        if (!broker.authorizer) throw new ConfigError('startBroker security.acls: the broker has no authorizer (authorizer.class.name was set to empty in config)')
        await broker.authorizer.createAcls(acls)
      }
      return embeddedSecurity(broker, { protocol, mechanisms, ca, names, passwords, clientCertificates })
    },
  }
}

interface SecurityState {
  protocol: EmbeddedSecurityProtocol
  mechanisms: EmbeddedSaslMechanism[]
  ca: CertificateAuthority | undefined
  names: string[]
  passwords: Map<string, string> | null
  clientCertificates: Map<string, IssuedCertificate>
}

function embeddedSecurity(broker: Broker, state: SecurityState): EmbeddedSecurity {
  const { protocol, mechanisms, ca, names, passwords, clientCertificates } = state
  return {
    protocol,
    mechanisms,
    ca,
    caPem: ca?.certificatePem,
    users: names,
    clientSettings(user = names[0], mechanism = mechanisms[0]): EmbeddedClientSettings {
      if (user !== undefined && !names.includes(user)) throw new Error(`no user ${user} (users: ${names.join(', ') || 'none'})`)
      if (mechanism !== undefined && !mechanisms.includes(mechanism)) throw new Error(`${mechanism} is not enabled (mechanisms: ${mechanisms.join(', ') || 'none'})`)
      const bootstrapServers = broker.bootstrapServers
      const cert = user !== undefined ? clientCertificates.get(user) : undefined
      const settings: EmbeddedClientSettings = {
        bootstrapServers,
        securityProtocol: protocol,
        kafkajs: { brokers: [bootstrapServers] },
        platformatic: { bootstrapBrokers: [bootstrapServers] },
        ferrolog: { bootstrapServers, 'security.protocol': protocol },
        java: { 'security.protocol': protocol },
      }
      if (ca) {
        settings.caPem = ca.certificatePem
        settings.kafkajs.ssl = { ca: [ca.certificatePem] }
        settings.platformatic.tls = { ca: ca.certificatePem }
        settings.ferrolog['ssl.ca.pem'] = ca.certificatePem
        Object.assign(settings.java, { 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': ca.certificatePem })
        if (cert) {
          settings.certificatePem = cert.chainPem
          settings.keyPem = cert.keyPem
          Object.assign(settings.kafkajs.ssl, { cert: cert.chainPem, key: cert.keyPem })
          Object.assign(settings.platformatic.tls, { cert: cert.chainPem, key: cert.keyPem })
          Object.assign(settings.ferrolog, { 'ssl.certificate.pem': cert.chainPem, 'ssl.key.pem': cert.keyPem })
          Object.assign(settings.java, { 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': cert.chainPem, 'ssl.keystore.key': cert.keyPem })
        }
      }
      if (mechanism !== undefined && user !== undefined) {
        settings.mechanism = mechanism
        settings.username = user
        settings.ferrolog['sasl.mechanism'] = mechanism
        settings.java['sasl.mechanism'] = mechanism
        if (mechanism === 'OAUTHBEARER') {
          // Unsecured tokens (alg none) with the user as `sub`, a fresh one at each (re-)authentication.
          const token = () => unsecuredJwt({ principal: user })
          const provider = () => Promise.resolve({ value: token() })
          settings.kafkajs.sasl = { mechanism: 'oauthbearer', oauthBearerProvider: provider }
          settings.platformatic.sasl = { mechanism, token }
          settings.ferrolog.oauthBearerProvider = provider
          settings.java['sasl.jaas.config'] = `${LOGIN_MODULE.OAUTHBEARER} required unsecuredLoginStringClaim_sub=${jaasQuote(user)};`
        } else {
          const password = passwords!.get(user)!
          settings.password = password
          settings.kafkajs.sasl = { mechanism: mechanism.toLowerCase() as 'plain', username: user, password }
          settings.platformatic.sasl = { mechanism, username: user, password }
          Object.assign(settings.ferrolog, { 'sasl.username': user, 'sasl.password': password })
          settings.java['sasl.jaas.config'] = `${LOGIN_MODULE[mechanism]} required username=${jaasQuote(user)} password=${jaasQuote(password)};`
        }
      }
      return settings
    },
  }
}
