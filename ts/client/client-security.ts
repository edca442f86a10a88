/**
 * How a client secures its connections, from Kafka's and librdkafka's configuration names
 * (Kafka's SslConfigs and SaslConfigs; librdkafka's CONFIGURATION.md):
 *
 *   security.protocol                         PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL
 *   ssl.ca.location | ssl.ca.pem              CA certificates (PEM file | PEM text) the broker's
 *                                             certificate must chain to (default: Node's roots)
 *   ssl.truststore.location | .certificates   Kafka's names for the same (ssl.truststore.type=PEM only)
 *   ssl.certificate.location | .pem           the client certificate (PEM), for ssl.client.auth
 *   ssl.key.location | ssl.key.pem            its private key (PEM, PKCS#8 or PKCS#1, maybe encrypted)
 *   ssl.keystore.location                     Kafka's PEM keystore: the key and the chain in one file
 *   ssl.keystore.key | .certificate.chain     Kafka's PEM keystore given inline
 *   ssl.key.password                          the private key's password
 *   ssl.endpoint.identification.algorithm     https (default: the broker's certificate must name
 *                                             the host connected to), none or '' (not checked)
 *   sasl.mechanism (librdkafka: sasl.mechanisms)  PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
 *   sasl.username, sasl.password              PLAIN and SCRAM credentials (librdkafka's names)
 *   sasl.jaas.config                          Kafka's: PlainLoginModule / ScramLoginModule with
 *                                             username and password, OAuthBearerLoginModule with
 *                                             unsecuredLoginStringClaim_sub (an unsecured token)
 *   enable.sasl.oauthbearer.unsecure.jwt      librdkafka's unsecured token, with
 *   sasl.oauthbearer.config                   "principal=NAME [scope=a,b] [lifeSeconds=N]"
 *   oauthBearerProvider                       a function resolving to `{ value: token }` (kafkajs's
 *                                             name), asked at each (re-)authentication
 *   sasl.login.callback.handler.class=...OAuthBearerLoginCallbackHandler with
 *   sasl.oauthbearer.token.endpoint.url, or   a token from an OAuth server by the client credentials
 *   sasl.oauthbearer.method=oidc              grant, kept fresh (Kafka's and librdkafka's settings:
 *                                             oauth-bearer-login-config.ts); the client that read the
 *                                             settings closes it (closeClientSecurity)
 *
 * Each may also be given in camelCase (`securityProtocol`). Values are checked here, files read
 * here: a bad one is an INVALID_CONFIG KafkaClientError naming the key, never its value for a
 * password or a key.
 */
import { readFileSync } from 'node:fs'
import { isSecurityProtocol, usesSasl, usesTls, type SecurityProtocol } from '../security/security-protocol.js'
import { JaasConfigError, parseJaasConfig as parseJaasEntries } from '../security/jaas-config.js'
import { KafkaClientError } from './errors.js'
import { OAUTH_LOGIN_CONFIG_KEYS, OAUTH_LOGIN_SECRET_KEYS, oauthBearerLoginFrom } from './oauth-bearer-login-config.js'
import type { OAuthBearerLogin } from './sasl/oauth-bearer-login.js'
import { unsecuredJwt, type OAuthBearerProvider } from './sasl/oauth-bearer-sasl-client.js'
import { isSaslMechanism, type SaslMechanism } from './sasl/sasl-client.js'

export interface ClientTlsOptions {
  /** PEM CA certificates; undefined: Node's default roots. */
  ca?: string
  /** PEM client certificate (chain) and key, for brokers with ssl.client.auth. */
  cert?: string
  key?: string
  passphrase?: string
  /** Check that the broker's certificate names the host (ssl.endpoint.identification.algorithm=https). */
  verifyHostname: boolean
}

export interface ClientSaslOptions {
  mechanism: SaslMechanism
  username?: string
  password?: string
  oauthBearerProvider?: OAuthBearerProvider
  /** The OAuth login behind oauthBearerProvider, when the settings asked for one. */
  oauthBearerLogin?: OAuthBearerLogin
}

export interface ClientSecurity {
  protocol: SecurityProtocol
  tls?: ClientTlsOptions
  sasl?: ClientSaslOptions
}

export const PLAINTEXT_SECURITY: ClientSecurity = { protocol: 'PLAINTEXT' }

/** Every key this module reads, by its dotted name. */
export const SECURITY_CONFIG_KEYS = [
  'security.protocol',
  'ssl.ca.location',
  'ssl.ca.pem',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.certificates',
  'ssl.certificate.location',
  'ssl.certificate.pem',
  'ssl.key.location',
  'ssl.key.pem',
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.key',
  'ssl.keystore.certificate.chain',
  'ssl.key.password',
  'ssl.endpoint.identification.algorithm',
  'sasl.mechanism',
  'sasl.mechanisms',
  'sasl.username',
  'sasl.password',
  'sasl.jaas.config',
  'enable.sasl.oauthbearer.unsecure.jwt',
  'sasl.oauthbearer.config',
  'oauthBearerProvider',
  ...OAUTH_LOGIN_CONFIG_KEYS,
] as const

const camel = (dotted: string) => dotted.replace(/[.-]([a-z])/g, (_, c: string) => c.toUpperCase())
const BY_NAME = new Map<string, string>(SECURITY_CONFIG_KEYS.flatMap((k) => [[k, k] as [string, string], [camel(k), k] as [string, string]]))
/** Keys whose values are never printed. */
const SECRET = new Set(['ssl.key.password', 'sasl.password', 'sasl.jaas.config', 'ssl.keystore.key', 'ssl.key.pem', 'sasl.oauthbearer.config', ...OAUTH_LOGIN_SECRET_KEYS])

/** The dotted name of a security key given dotted or in camelCase; undefined for any other key. */
export function securityConfigKey(name: string): string | undefined {
  return BY_NAME.get(name)
}

function invalid(key: string, value: unknown, why: string): KafkaClientError {
  const shown = SECRET.has(key) ? '[hidden]' : typeof value === 'function' ? '[function]' : String(value)
  return new KafkaClientError('INVALID_CONFIG', `${key}=${shown}: ${why}`)
}

/** Kafka's JAAS configuration line: `<LoginModule class> <flag> key="value" ...;`. */
export interface JaasEntry {
  loginModule: string
  options: ReadonlyMap<string, string>
}

/**
 * Parses a sasl.jaas.config value as Kafka's clients take it: one login module entry (the
 * grammar, quoting and escapes are the broker's: ts/security/jaas-config.ts).
 */
export function parseJaasConfig(text: string): JaasEntry {
  let entries: JaasEntry[]
  try {
    entries = parseJaasEntries(text)
  } catch (err) {
    if (err instanceof JaasConfigError) throw new KafkaClientError('INVALID_CONFIG', `sasl.jaas.config: ${err.message}`, { cause: err })
    throw err
  }
  const [entry, ...more] = entries
  if (entry === undefined) throw new KafkaClientError('INVALID_CONFIG', 'sasl.jaas.config: wants "<LoginModule> required key=value ...;"')
  if (more.length > 0) throw new KafkaClientError('INVALID_CONFIG', 'sasl.jaas.config: one login module only')
  return { loginModule: entry.loginModule, options: entry.options }
}

const PLAIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule'
const SCRAM_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule'
const OAUTH_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule'

function readPem(key: string, path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw new KafkaClientError('INVALID_CONFIG', `${key}=${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err })
  }
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----\s*/g

/** The PEM blocks of `pem` whose label passes `want` (a Kafka PEM keystore holds the key and the chain). */
function pemBlocks(pem: string, want: (label: string) => boolean): string {
  return [...pem.matchAll(PEM_BLOCK)]
    .filter((m) => want(m[1]!))
    .map((m) => m[0].trim() + '\n')
    .join('')
}

/** librdkafka's sasl.oauthbearer.config for the unsecured token: "principal=NAME scope=a,b lifeSeconds=N". */
function unsecuredFromRdkafka(config: string): OAuthBearerProvider {
  const fields = new Map(
    config
      .trim()
      .split(/\s+/)
      .filter((s) => s !== '')
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as [string, string]),
  )
  const principal = fields.get('principal')
  if (!principal) throw new KafkaClientError('INVALID_CONFIG', 'sasl.oauthbearer.config: wants principal=NAME for an unsecured token')
  const scope = fields.get('scope')?.split(',')
  const lifeSeconds = fields.has('lifeSeconds') ? Number(fields.get('lifeSeconds')) : undefined
  return () => ({ value: unsecuredJwt({ principal, scope, lifeSeconds }) })
}

/** Kafka's OAuthBearerLoginModule options for its unsecured token (OAuthBearerUnsecuredLoginCallbackHandler). */
function unsecuredFromJaas(options: ReadonlyMap<string, string>): OAuthBearerProvider {
  const principal = options.get('unsecuredLoginStringClaim_sub')
  if (!principal)
    throw new KafkaClientError(
      'INVALID_CONFIG',
      'sasl.jaas.config: OAuthBearerLoginModule wants unsecuredLoginStringClaim_sub (only unsecured tokens come from JAAS; give oauthBearerProvider otherwise)',
    )
  // unsecuredLoginListClaim_scope: the first character separates the items (",a,b").
  const list = options.get('unsecuredLoginListClaim_scope')
  const scope = list ? list.slice(1).split(list[0]!) : undefined
  const lifeSeconds = options.has('unsecuredLoginLifetimeSeconds') ? Number(options.get('unsecuredLoginLifetimeSeconds')) : undefined
  return () => ({ value: unsecuredJwt({ principal, scope, lifeSeconds }) })
}

/**
 * Stops what `security` runs in the background (a refreshing OAuth login); the client that read
 * the settings calls it when it closes.
 */
export function closeClientSecurity(security: ClientSecurity): void {
  security.sasl?.oauthBearerLogin?.close()
}

/** The client's security from its configuration (keys dotted or camelCase; others ignored). */
export function clientSecurityFrom(config: Record<string, unknown>): ClientSecurity {
  const v = new Map<string, unknown>()
  for (const [name, value] of Object.entries(config)) {
    const key = securityConfigKey(name)
    if (key !== undefined && value !== undefined && value !== null) v.set(key, value)
  }
  const str = (key: string): string | undefined => {
    const value = v.get(key)
    if (value === undefined) return undefined
    if (typeof value !== 'string') throw invalid(key, value, 'a string')
    return value
  }
  const protocol = (str('security.protocol') ?? 'PLAINTEXT').toUpperCase()
  if (!isSecurityProtocol(protocol)) throw invalid('security.protocol', protocol, 'PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL')
  const security: ClientSecurity = { protocol }
  if (usesTls(protocol)) security.tls = tlsFrom(str)
  if (usesSasl(protocol)) security.sasl = saslFrom(str, v)
  return security
}

function tlsFrom(str: (key: string) => string | undefined): ClientTlsOptions {
  for (const key of ['ssl.truststore.type', 'ssl.keystore.type']) {
    const type = str(key)
    if (type !== undefined && type.toUpperCase() !== 'PEM') throw invalid(key, type, 'only PEM is read here (convert a JKS or PKCS12 store with keytool/openssl)')
  }
  const tls: ClientTlsOptions = { verifyHostname: true }
  const caLocation = str('ssl.ca.location') ?? str('ssl.truststore.location')
  const ca = str('ssl.ca.pem') ?? str('ssl.truststore.certificates') ?? (caLocation !== undefined ? readPem('ssl.ca.location', caLocation) : undefined)
  if (ca !== undefined) {
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw invalid('ssl.ca.location', caLocation ?? '[pem]', 'no PEM certificate in it')
    tls.ca = ca
  }
  const keystoreLocation = str('ssl.keystore.location')
  const keystore = keystoreLocation !== undefined ? readPem('ssl.keystore.location', keystoreLocation) : undefined
  const certLocation = str('ssl.certificate.location')
  tls.cert =
    str('ssl.certificate.pem') ??
    str('ssl.keystore.certificate.chain') ??
    (certLocation !== undefined ? readPem('ssl.certificate.location', certLocation) : undefined) ??
    (keystore !== undefined ? pemBlocks(keystore, (label) => label === 'CERTIFICATE') : undefined)
  const keyLocation = str('ssl.key.location')
  tls.key =
    str('ssl.key.pem') ??
    str('ssl.keystore.key') ??
    (keyLocation !== undefined ? readPem('ssl.key.location', keyLocation) : undefined) ??
    (keystore !== undefined ? pemBlocks(keystore, (label) => label.endsWith('PRIVATE KEY')) : undefined)
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw invalid('ssl.certificate.location', certLocation ?? keyLocation ?? '', 'a client certificate and its key go together')
  if (tls.cert === undefined) delete tls.cert
  if (tls.key === undefined) delete tls.key
  const password = str('ssl.key.password')
  if (password !== undefined) tls.passphrase = password
  const algorithm = (str('ssl.endpoint.identification.algorithm') ?? 'https').toLowerCase()
  if (algorithm !== 'https' && algorithm !== 'none' && algorithm !== '') throw invalid('ssl.endpoint.identification.algorithm', algorithm, 'https, none or empty')
  tls.verifyHostname = algorithm === 'https'
  return tls
}

function saslFrom(str: (key: string) => string | undefined, v: ReadonlyMap<string, unknown>): ClientSaslOptions {
  const provider = v.get('oauthBearerProvider')
  const unsecureJwt = v.get('enable.sasl.oauthbearer.unsecure.jwt')
  const mechanism = (str('sasl.mechanism') ?? str('sasl.mechanisms'))?.toUpperCase()
  if (mechanism === undefined) throw new KafkaClientError('INVALID_CONFIG', 'sasl.mechanism is required with a SASL security.protocol (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)')
  if (!isSaslMechanism(mechanism)) throw invalid('sasl.mechanism', mechanism, 'PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (GSSAPI is not supported)')
  const jaasText = str('sasl.jaas.config')
  const jaas = jaasText !== undefined ? parseJaasConfig(jaasText) : undefined
  if (mechanism === 'OAUTHBEARER') {
    if (provider !== undefined) {
      if (typeof provider !== 'function') throw invalid('oauthBearerProvider', provider, 'a function resolving to { value: token }')
      return { mechanism, oauthBearerProvider: provider as OAuthBearerProvider }
    }
    const login = oauthBearerLoginFrom({ raw: (key) => v.get(key), jaas: jaas?.loginModule === OAUTH_MODULE ? jaas.options : undefined, tls: tlsFrom })
    if (login) return { mechanism, oauthBearerProvider: () => login.token(), oauthBearerLogin: login }
    if (unsecureJwt === true || unsecureJwt === 'true') return { mechanism, oauthBearerProvider: unsecuredFromRdkafka(str('sasl.oauthbearer.config') ?? '') }
    if (jaas?.loginModule === OAUTH_MODULE) return { mechanism, oauthBearerProvider: unsecuredFromJaas(jaas.options) }
    throw new KafkaClientError(
      'INVALID_CONFIG',
      'sasl.mechanism=OAUTHBEARER wants oauthBearerProvider, an OAuth token endpoint (sasl.oauthbearer.token.endpoint.url with OAuthBearerLoginCallbackHandler, or sasl.oauthbearer.method=oidc), enable.sasl.oauthbearer.unsecure.jwt=true or an OAuthBearerLoginModule sasl.jaas.config',
    )
  }
  let username = str('sasl.username')
  let password = str('sasl.password')
  if (jaas !== undefined) {
    const module = mechanism === 'PLAIN' ? PLAIN_MODULE : SCRAM_MODULE
    if (jaas.loginModule !== module) throw invalid('sasl.jaas.config', '', `${mechanism} wants ${module}, not ${jaas.loginModule}`)
    username ??= jaas.options.get('username')
    password ??= jaas.options.get('password')
  }
  if (username === undefined || password === undefined)
    throw new KafkaClientError('INVALID_CONFIG', `sasl.mechanism=${mechanism} wants sasl.username and sasl.password (or a sasl.jaas.config with both)`)
  return { mechanism, username, password }
}
