/**
 * The client settings of OAUTHBEARER's OAuth login (sasl/oauth-bearer-login.ts), by Kafka's and
 * librdkafka's names; client-security.ts calls this for sasl.mechanism=OAUTHBEARER.
 *
 * Kafka (4.4, KIP-768 and KIP-1139):
 *   sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler
 *   sasl.oauthbearer.token.endpoint.url       http(s) URL; must be listed in
 *   org.apache.kafka.sasl.oauthbearer.allowed.urls   (Kafka: a JVM system property; here a client
 *                                             setting of that name, comma separated, exact match)
 *   sasl.oauthbearer.client.credentials.client.id | .client.secret   or the deprecated
 *                                             OAuthBearerLoginModule JAAS options clientId, clientSecret
 *   sasl.oauthbearer.scope                    or the JAAS option scope
 *   sasl.oauthbearer.header.urlencode         URL-encode id and secret in the Basic header (false)
 *   sasl.oauthbearer.jwt.retriever.class      DefaultJwtRetriever / ClientCredentialsJwtRetriever only
 *   sasl.oauthbearer.sub.claim.name | .scope.claim.name   (sub, scope)
 *   JAAS extension_<name>="value"             SASL extensions sent with the token
 *   JAAS ssl.*                                the token endpoint's TLS settings (Kafka builds its
 *                                             SSLSocketFactory from these JAAS options); else Node's roots
 * librdkafka:
 *   sasl.oauthbearer.method=oidc, sasl.oauthbearer.client.id, sasl.oauthbearer.client.secret,
 *   sasl.oauthbearer.token.endpoint.url, sasl.oauthbearer.scope, sasl.oauthbearer.extensions
 *   ("a=b,c=d"), https.ca.location | https.ca.pem (the endpoint's CAs). librdkafka has no allowed
 *   URL list: the one of Kafka's name is checked when given.
 * Both:
 *   sasl.login.refresh.window.factor (0.8, 0.5-1.0), .window.jitter (0.05, 0-0.25),
 *   .min.period.seconds (60, 0-900), .buffer.seconds (300, 0-3600), sasl.login.retry.backoff.ms
 *   (100), .max.ms (10000), sasl.login.connect.timeout.ms, sasl.login.read.timeout.ms (unset: none).
 */
import { KafkaClientError } from './errors.js'
import { OAuthBearerLogin, type OAuthBearerLoginOptions } from './sasl/oauth-bearer-login.js'

export const LOGIN_CALLBACK_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler'
export const UNSECURED_LOGIN_CALLBACK_HANDLER = 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler'
export const ALLOWED_URLS = 'org.apache.kafka.sasl.oauthbearer.allowed.urls'
const RETRIEVERS = ['org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever', 'org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever']
const VALIDATORS = ['org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator', 'org.apache.kafka.common.security.oauthbearer.ClientJwtValidator']

/** The keys read here. */
export const OAUTH_LOGIN_CONFIG_KEYS = [
  'sasl.login.callback.handler.class',
  'sasl.oauthbearer.token.endpoint.url',
  'sasl.oauthbearer.client.credentials.client.id',
  'sasl.oauthbearer.client.credentials.client.secret',
  'sasl.oauthbearer.scope',
  'sasl.oauthbearer.header.urlencode',
  'sasl.oauthbearer.jwt.retriever.class',
  'sasl.oauthbearer.jwt.validator.class',
  'sasl.oauthbearer.sub.claim.name',
  'sasl.oauthbearer.scope.claim.name',
  'sasl.login.refresh.window.factor',
  'sasl.login.refresh.window.jitter',
  'sasl.login.refresh.min.period.seconds',
  'sasl.login.refresh.buffer.seconds',
  'sasl.login.retry.backoff.ms',
  'sasl.login.retry.backoff.max.ms',
  'sasl.login.connect.timeout.ms',
  'sasl.login.read.timeout.ms',
  ALLOWED_URLS,
  'sasl.oauthbearer.method',
  'sasl.oauthbearer.client.id',
  'sasl.oauthbearer.client.secret',
  'sasl.oauthbearer.extensions',
  'https.ca.location',
  'https.ca.pem',
] as const

/** Of those, the ones whose values are never printed. */
export const OAUTH_LOGIN_SECRET_KEYS = ['sasl.oauthbearer.client.credentials.client.secret', 'sasl.oauthbearer.client.secret']

export interface OAuthLoginSources {
  /** A setting's value as given (string, number or boolean); undefined when unset. */
  raw(key: string): unknown
  /** The OAuthBearerLoginModule JAAS options, when sasl.jaas.config has that module. */
  jaas: ReadonlyMap<string, string> | undefined
  /** The TLS options of settings read by `get` (client-security.ts's reading of ssl.*). */
  tls(get: (key: string) => string | undefined): OAuthBearerLoginOptions['tls']
}

function invalid(key: string, value: unknown, why: string): KafkaClientError {
  return new KafkaClientError('INVALID_CONFIG', `${key}=${OAUTH_LOGIN_SECRET_KEYS.includes(key) ? '[hidden]' : String(value)}: ${why}`)
}

/**
 * The OAuth login the settings ask for (Kafka's OAuthBearerLoginCallbackHandler or librdkafka's
 * sasl.oauthbearer.method=oidc), or undefined when they ask for none.
 */
export function oauthBearerLoginFrom(s: OAuthLoginSources): OAuthBearerLogin | undefined {
  const str = (key: string): string | undefined => {
    const v = s.raw(key)
    if (v === undefined) return undefined
    if (typeof v !== 'string') throw invalid(key, v, 'a string')
    return v.trim()
  }
  const num = (key: string, def: number | undefined, min: number, max: number, integer: boolean): number | undefined => {
    const v = s.raw(key)
    if (v === undefined || v === '') return def
    const n = typeof v === 'string' ? Number(v) : v
    if (typeof n !== 'number' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) throw invalid(key, v, `a number in [${min}, ${max}]`)
    return n
  }
  const handler = str('sasl.login.callback.handler.class')
  const method = str('sasl.oauthbearer.method')?.toLowerCase()
  if (method !== undefined && method !== 'default' && method !== 'oidc') throw invalid('sasl.oauthbearer.method', method, 'default or oidc')
  const kafkaStyle = handler === LOGIN_CALLBACK_HANDLER
  if (handler !== undefined && handler !== '' && !kafkaStyle && handler !== UNSECURED_LOGIN_CALLBACK_HANDLER)
    throw invalid('sasl.login.callback.handler.class', handler, `${LOGIN_CALLBACK_HANDLER} or ${UNSECURED_LOGIN_CALLBACK_HANDLER} (no other class can be loaded here)`)
  if (!kafkaStyle && method !== 'oidc') return undefined

  const retriever = str('sasl.oauthbearer.jwt.retriever.class')
  if (retriever && !RETRIEVERS.includes(retriever)) throw invalid('sasl.oauthbearer.jwt.retriever.class', retriever, `only the client credentials grant is supported (${RETRIEVERS.join(', ')})`)
  const validator = str('sasl.oauthbearer.jwt.validator.class')
  if (validator && !VALIDATORS.includes(validator)) throw invalid('sasl.oauthbearer.jwt.validator.class', validator, VALIDATORS.join(' or '))

  const urlKey = 'sasl.oauthbearer.token.endpoint.url'
  const urlText = str(urlKey)
  if (!urlText) throw new KafkaClientError('INVALID_CONFIG', `The OAuth configuration option ${urlKey} value is required`)
  let url: URL
  try {
    url = new URL(urlText)
  } catch {
    throw invalid(urlKey, urlText, `The OAuth configuration option ${urlKey} contains a URL (${urlText}) that is malformed`)
  }
  if (url.protocol === 'file:') throw invalid(urlKey, urlText, "a file: token (Kafka's FileJwtRetriever) is not supported; give an http(s) token endpoint")
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(
      urlKey,
      urlText,
      `The OAuth configuration option ${urlKey} contains a URL (${urlText}) that contains an invalid protocol (${url.protocol.slice(0, -1)}); only "http", "https", and "file" protocol are supported`,
    )
  const allowed = str(ALLOWED_URLS)
  if (kafkaStyle || allowed !== undefined) {
    const list = (allowed ?? '').split(',').map((u) => u.trim())
    if (!list.includes(urlText)) throw invalid(urlKey, urlText, `The URL cannot be accessed due to restrictions. Update the config '${ALLOWED_URLS}' to allow the URL to be accessed.`)
  }

  const jaas = s.jaas
  const configOrJaas = (config: string, jaasName: string | undefined, required: boolean): string | undefined => {
    const v = str(config) ?? (jaasName !== undefined ? jaas?.get(jaasName)?.trim() : undefined)
    if (required && !v) throw new KafkaClientError('INVALID_CONFIG', `Could not find OAuth configuration for ${config}${jaasName ? ` or OAuth JAAS configuration for ${jaasName}` : ''}`)
    return v || undefined
  }
  const clientId = kafkaStyle ? configOrJaas('sasl.oauthbearer.client.credentials.client.id', 'clientId', true)! : configOrJaas('sasl.oauthbearer.client.id', undefined, true)!
  const clientSecret = kafkaStyle ? configOrJaas('sasl.oauthbearer.client.credentials.client.secret', 'clientSecret', true)! : configOrJaas('sasl.oauthbearer.client.secret', undefined, true)!
  const scope = configOrJaas('sasl.oauthbearer.scope', kafkaStyle ? 'scope' : undefined, false)

  let extensions: Record<string, string> | undefined
  if (kafkaStyle) {
    for (const [k, v] of jaas ?? []) if (k.startsWith('extension_')) (extensions ??= {})[k.slice('extension_'.length)] = v
  } else {
    for (const kv of (str('sasl.oauthbearer.extensions') ?? '').split(',').filter((x) => x.trim() !== '')) {
      const eq = kv.indexOf('=')
      if (eq <= 0) throw invalid('sasl.oauthbearer.extensions', kv, 'key=value pairs, comma separated')
      ;(extensions ??= {})[kv.slice(0, eq).trim()] = kv.slice(eq + 1).trim()
    }
  }

  let tls: OAuthBearerLoginOptions['tls']
  if (url.protocol === 'https:') {
    if (kafkaStyle) {
      const jaasSsl = [...(jaas ?? [])].filter(([k]) => k.startsWith('ssl.'))
      if (jaasSsl.length > 0) tls = s.tls((key) => new Map(jaasSsl).get(key))
    } else if (str('https.ca.location') !== undefined || str('https.ca.pem') !== undefined) {
      tls = s.tls((key) => (key === 'ssl.ca.location' ? str('https.ca.location') : key === 'ssl.ca.pem' ? str('https.ca.pem') : undefined))
    }
  }

  const retryBackoffMs = num('sasl.login.retry.backoff.ms', 100, 0, Number.MAX_SAFE_INTEGER, true)!
  const retryBackoffMaxMs = num('sasl.login.retry.backoff.max.ms', 10_000, 0, Number.MAX_SAFE_INTEGER, true)!
  if (retryBackoffMaxMs < retryBackoffMs)
    throw invalid('sasl.login.retry.backoff.max.ms', retryBackoffMaxMs, `retryBackoffMaxMs value (${retryBackoffMaxMs}) is less than retryBackoffMs value (${retryBackoffMs})`)
  return new OAuthBearerLogin({
    tokenEndpointUrl: url,
    clientId,
    clientSecret,
    scope,
    urlencodeHeader: String(s.raw('sasl.oauthbearer.header.urlencode') ?? 'false').toLowerCase() === 'true',
    retryBackoffMs,
    retryBackoffMaxMs,
    connectTimeoutMs: num('sasl.login.connect.timeout.ms', undefined, 0, 2 ** 31 - 1, true),
    readTimeoutMs: num('sasl.login.read.timeout.ms', undefined, 0, 2 ** 31 - 1, true),
    tls,
    subClaimName: str('sasl.oauthbearer.sub.claim.name') || 'sub',
    scopeClaimName: str('sasl.oauthbearer.scope.claim.name') || 'scope',
    extensions,
    refresh: {
      windowFactor: num('sasl.login.refresh.window.factor', 0.8, 0.5, 1.0, false)!,
      windowJitter: num('sasl.login.refresh.window.jitter', 0.05, 0, 0.25, false)!,
      minPeriodSeconds: num('sasl.login.refresh.min.period.seconds', 60, 0, 900, true)!,
      bufferSeconds: num('sasl.login.refresh.buffer.seconds', 300, 0, 3600, true)!,
    },
  })
}
