/**
 * Kafka's DefaultSslEngineFactory for a listener, with node:tls: the `ssl.*` settings of one
 * listener (Kafka's names; the `listener.name.<name>.` prefix already resolved) made into the
 * options of a TLS server, and a client certificate made into a principal.
 *
 * Key and certificates in PEM, as Kafka reads them:
 * - `ssl.keystore.type=PEM` with `ssl.keystore.location` (one file: the private key, PKCS#8,
 *   encrypted or not, and the certificate chain), or inline `ssl.keystore.key` and
 *   `ssl.keystore.certificate.chain`; `ssl.key.password` decrypts an encrypted key.
 * - `ssl.truststore.type=PEM` with `ssl.truststore.location` or inline
 *   `ssl.truststore.certificates`: the CAs client certificates must chain to.
 * - `ssl.client.auth`: `required` (no trusted certificate, no handshake), `requested` (a
 *   certificate is asked for; none is accepted, an untrusted one refused), `none`.
 * - `ssl.enabled.protocols` (TLSv1.2, TLSv1.3): node:tls takes a range, from the oldest enabled
 *   to the newest; `ssl.protocol` names the newest allowed when it is a version.
 * - `ssl.cipher.suites`: IANA names as Kafka takes them (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
 *   TLS_AES_128_GCM_SHA256), passed to OpenSSL under its names.
 * JKS and PKCS12 key stores are not read: a SslConfigError names what to use instead.
 *
 * The principal (Kafka's DefaultKafkaPrincipalBuilder): the client certificate's subject DN as
 * RFC 2253 writes it (Java's X500Principal.getName(): the RDNs from the last to the first,
 * `CN=alice,OU=eng,O=Example\, Inc,C=US`), mapped by `ssl.principal.mapping.rules`; no
 * certificate: User:ANONYMOUS.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { PeerCertificate, SecureContextOptions, SecureVersion, TlsOptions } from 'node:tls'
import { ANONYMOUS, userPrincipal, type KafkaPrincipal } from './kafka-principal.js'
import { SslPrincipalMapper } from './ssl-principal-mapper.js'

/** The `ssl.*` settings one listener uses, by Kafka's names (absent: Kafka's default). */
export type SslSettings = Readonly<Record<string, string | undefined>>

/** Settings that cannot make a TLS server (a missing key, a bad file, an unknown protocol). */
export class SslConfigError extends Error {
  readonly code = 'INVALID_CONFIG' as const
  constructor(message: string) {
    super(message)
    this.name = 'SslConfigError'
  }
}

export type SslClientAuth = 'required' | 'requested' | 'none'

/** What a TLS listener needs: the server options (certificate included) and the principal of a peer. */
export interface SslServerConfig {
  /** For tls.createServer and setSecureContext. */
  options: TlsOptions & SecureContextOptions
  clientAuth: SslClientAuth
  principalOf(peer: PeerCertificate | null): KafkaPrincipal
}

const VERSIONS: readonly SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']

function readPemFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw new SslConfigError(`cannot read ${what} ${path}: ${(err as Error).message}`)
  }
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g

function pemBlocks(text: string, label: (l: string) => boolean): string[] {
  return [...text.matchAll(PEM_BLOCK)].filter((m) => label(m[1]!)).map((m) => m[0])
}

const isKey = (label: string) => label.endsWith('PRIVATE KEY')
const isCert = (label: string) => label === 'CERTIFICATE'

function list(value: string | undefined, fallback: string): string[] {
  return (value ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/** An IANA (JSSE) cipher suite name as OpenSSL names it; TLS 1.3 suites keep their names. */
export function opensslCipherName(iana: string): string {
  if (/^TLS_(AES_\d+_GCM_SHA\d+|CHACHA20_POLY1305_SHA256|AES_128_CCM(_8)?_SHA256)$/.test(iana)) return iana
  const m = /^TLS_(ECDHE_RSA|ECDHE_ECDSA|DHE_RSA|RSA)_WITH_(AES_(128|256)_(GCM|CBC)_(SHA\d*)|CHACHA20_POLY1305_SHA256)$/.exec(iana)
  if (!m) throw new SslConfigError(`ssl.cipher.suites: unknown cipher suite ${iana}`)
  const kx = m[1] === 'RSA' ? '' : `${m[1]!.replace('_', '-')}-`
  if (m[2] === 'CHACHA20_POLY1305_SHA256') return `${kx}CHACHA20-POLY1305`
  const mode = m[4] === 'GCM' ? 'GCM-' : ''
  const mac = m[5] === 'SHA' ? 'SHA' : m[5]
  return `${kx}AES${m[3]}-${mode}${mac}`
}

/** The subject DN of a certificate as Java's X500Principal.getName() (RFC 2253) writes it. */
export function rfc2253SubjectName(certificate: X509Certificate): string {
  return certificate.subject.split('\n').reverse().join(',')
}

function keystore(settings: SslSettings): { key: string; cert: string; passphrase?: string } {
  const type = (settings['ssl.keystore.type'] ?? 'JKS').toUpperCase()
  const location = settings['ssl.keystore.location']
  const inlineKey = settings['ssl.keystore.key']
  const inlineChain = settings['ssl.keystore.certificate.chain']
  const passphrase = settings['ssl.key.password']
  if ((inlineKey || inlineChain) && location) throw new SslConfigError('ssl.keystore.location and ssl.keystore.key / ssl.keystore.certificate.chain cannot both be set')
  if (!location && !inlineKey && !inlineChain)
    throw new SslConfigError('an SSL listener needs a key store: ssl.keystore.type=PEM with ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain')
  if (type !== 'PEM') throw new SslConfigError(`ssl.keystore.type ${type} is not supported: use ssl.keystore.type=PEM (key and certificate chain in PEM)`)
  let keyText: string
  let chainText: string
  if (location) {
    const text = readPemFile(location, 'ssl.keystore.location')
    keyText = text
    chainText = text
  } else {
    if (!inlineKey || !inlineChain) throw new SslConfigError('ssl.keystore.key and ssl.keystore.certificate.chain must be set together')
    keyText = inlineKey
    chainText = inlineChain
  }
  const keys = pemBlocks(keyText, isKey)
  const certs = pemBlocks(chainText, isCert)
  const key = keys[0]
  if (key === undefined || keys.length !== 1) throw new SslConfigError(`the key store must hold one private key in PEM, found ${keys.length}`)
  if (certs.length === 0) throw new SslConfigError('the key store holds no certificate in PEM')
  try {
    createPrivateKey({ key, format: 'pem', passphrase: passphrase ?? '' })
  } catch (err) {
    throw new SslConfigError(`the key store's private key cannot be read${passphrase === undefined ? ' (is it encrypted? set ssl.key.password)' : ' with ssl.key.password'}: ${(err as Error).message}`)
  }
  return { key, cert: certs.join('\n'), ...(passphrase !== undefined ? { passphrase } : {}) }
}

function truststore(settings: SslSettings): string[] | undefined {
  const location = settings['ssl.truststore.location']
  const inline = settings['ssl.truststore.certificates']
  if (!location && !inline) return undefined
  if (location && inline) throw new SslConfigError('ssl.truststore.location and ssl.truststore.certificates cannot both be set')
  const type = (settings['ssl.truststore.type'] ?? 'JKS').toUpperCase()
  if (type !== 'PEM') throw new SslConfigError(`ssl.truststore.type ${type} is not supported: use ssl.truststore.type=PEM`)
  const certs = pemBlocks(location ? readPemFile(location, 'ssl.truststore.location') : inline!, isCert)
  if (certs.length === 0) throw new SslConfigError('the trust store holds no certificate in PEM')
  return certs
}

function protocols(settings: SslSettings): { minVersion: SecureVersion; maxVersion: SecureVersion } {
  const enabled = list(settings['ssl.enabled.protocols'], 'TLSv1.2,TLSv1.3')
  for (const p of enabled) if (!VERSIONS.includes(p as SecureVersion)) throw new SslConfigError(`ssl.enabled.protocols: unknown protocol ${p} (TLSv1.2, TLSv1.3)`)
  if (enabled.length === 0) throw new SslConfigError('ssl.enabled.protocols names no protocol')
  const indexes = enabled.map((p) => VERSIONS.indexOf(p as SecureVersion))
  let max = Math.max(...indexes)
  const protocol = settings['ssl.protocol'] ?? 'TLSv1.3'
  if (VERSIONS.includes(protocol as SecureVersion)) max = Math.min(max, VERSIONS.indexOf(protocol as SecureVersion))
  else if (protocol !== 'TLS') throw new SslConfigError(`ssl.protocol: unknown protocol ${protocol}`)
  const min = Math.min(...indexes)
  if (min > max) throw new SslConfigError(`ssl.protocol ${protocol} is older than every protocol of ssl.enabled.protocols`)
  return { minVersion: VERSIONS[min]!, maxVersion: VERSIONS[max]! } // indexes of listed versions
}

/**
 * The TLS server of a listener with `settings`; throws SslConfigError for settings that cannot
 * make one (files are read now: call again to reload them).
 */
export function sslServerConfig(settings: SslSettings): SslServerConfig {
  const clientAuth = (settings['ssl.client.auth'] ?? 'none').toLowerCase()
  if (clientAuth !== 'required' && clientAuth !== 'requested' && clientAuth !== 'none') throw new SslConfigError(`ssl.client.auth must be required, requested or none, not ${clientAuth}`)
  let mapper: SslPrincipalMapper
  try {
    mapper = new SslPrincipalMapper(settings['ssl.principal.mapping.rules'] ?? 'DEFAULT')
  } catch (err) {
    throw new SslConfigError(`ssl.principal.mapping.rules: ${(err as Error).message}`)
  }
  const ca = truststore(settings)
  if (clientAuth !== 'none' && !ca) throw new SslConfigError(`ssl.client.auth=${clientAuth} needs a trust store (ssl.truststore.type=PEM with ssl.truststore.location or ssl.truststore.certificates)`)
  const suites = list(settings['ssl.cipher.suites'], '').map(opensslCipherName)
  const options: TlsOptions & SecureContextOptions = {
    ...keystore(settings),
    ...protocols(settings),
    ...(ca ? { ca } : {}),
    ...(suites.length > 0 ? { ciphers: suites.join(':') } : {}),
    requestCert: clientAuth !== 'none',
    // `requested` lets a client without a certificate in; the connection refuses an untrusted one itself.
    rejectUnauthorized: clientAuth === 'required',
  }
  return {
    options,
    clientAuth,
    principalOf(peer) {
      if (!peer || !peer.raw) return ANONYMOUS
      return userPrincipal(mapper.getName(rfc2253SubjectName(new X509Certificate(peer.raw))))
    },
  }
}
