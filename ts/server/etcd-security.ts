/**
 * The etcd client's TLS and authentication from the broker's config (ferrolog's own keys, named
 * after etcdctl's flags): `cluster.metadata.ssl.ca.location` (--cacert; set, the endpoints are
 * reached over https), `cluster.metadata.ssl.certificate.location` and
 * `cluster.metadata.ssl.key.location` (--cert, --key: for an etcd with --client-cert-auth),
 * `cluster.metadata.username` and `cluster.metadata.password` (--user: for an etcd with
 * authentication enabled). Files are read at start; a file that cannot be read is a ConfigError
 * naming the key.
 */
import { readFileSync } from 'node:fs'
import type { BrokerConfig } from '../config/broker-configs.js'
import { ConfigError } from '../config/config-def.js'
import type { EtcdSecurity } from '../cluster/etcd-client.js'

function readPem(key: string, path: string | null): string | undefined {
  if (path === null) return undefined
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new ConfigError(`${key}=${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if (!text.includes('-----BEGIN ')) throw new ConfigError(`${key}=${path}: no PEM block in it`)
  return text
}

/** The etcd client's security from `config` (see the module comment). */
export function etcdSecurityOf(config: BrokerConfig): EtcdSecurity {
  const c = config.cluster
  const security: EtcdSecurity = {}
  const ca = readPem('cluster.metadata.ssl.ca.location', c.etcdCaLocation)
  const cert = readPem('cluster.metadata.ssl.certificate.location', c.etcdCertificateLocation)
  const key = readPem('cluster.metadata.ssl.key.location', c.etcdKeyLocation)
  if ((cert === undefined) !== (key === undefined)) throw new ConfigError('cluster.metadata.ssl.certificate.location and cluster.metadata.ssl.key.location go together')
  if (cert !== undefined && ca === undefined) throw new ConfigError('cluster.metadata.ssl.certificate.location needs cluster.metadata.ssl.ca.location (the client certificate is presented over TLS)')
  if ((c.etcdUsername === null) !== (c.etcdPassword === null)) throw new ConfigError('cluster.metadata.username and cluster.metadata.password go together')
  if (ca !== undefined) security.ca = ca
  if (cert !== undefined && key !== undefined) Object.assign(security, { cert, key })
  if (c.etcdUsername !== null && c.etcdPassword !== null) Object.assign(security, { username: c.etcdUsername, password: c.etcdPassword })
  return security
}
