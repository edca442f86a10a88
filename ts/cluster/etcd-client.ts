/**
 * The etcd connection of a cluster-mode broker: the `etcd3` client (gRPC, etcd v3 API; works with
 * etcd 3.4 and Node 20) with fault handling fit for a broker whose liveness is an etcd lease.
 *
 * The client's defaults (a circuit breaker that stops calling a host for 5 s after 3 failures,
 * watch reconnects backing off to 30 s, gRPC reconnects backing off to 2 min) would keep a broker
 * away from a restarted etcd far longer than its session timeout. Here: no circuit breaker,
 * a few quick retries of a failed call, reconnects within a second, and a deadline on every
 * unary call (`requestTimeoutMs`) so nothing hangs while etcd is away; the callers (lease
 * keep-alive, watch resume, CAS loops) retry at their own level.
 *
 * Security (`security`, the broker's cluster.metadata.ssl.* and cluster.metadata.username /
 * password): with a CA, the endpoints are reached over TLS (https; etcd's --cert-file), the
 * server certificate checked against that CA, and a client certificate presented when one is
 * given (etcd's --client-cert-auth); with a username, the client exchanges it and the password
 * for etcd's auth token (etcd's `auth enable`), fetched again when etcd says it expired. The
 * password is never logged.
 */
import { ExponentialBackoff, handleWhen, noop, retry, type IBackoff } from 'cockatiel'
import { Etcd3, isRecoverableError, type Namespace } from 'etcd3'
import { clusterPrefix } from './keys.js'

/** The etcd client's TLS and authentication (PEM text, as etcdctl's --cacert, --cert, --key and --user). */
export interface EtcdSecurity {
  /** CA certificates of etcd's server certificate: set, the connection uses TLS. */
  ca?: string
  /** A client certificate and its (unencrypted) key, for an etcd with --client-cert-auth. */
  cert?: string
  key?: string
  /** etcd's user and password, when etcd's authentication is enabled. */
  username?: string
  password?: string
}

export interface EtcdConnectOptions {
  /** `etcd://host:port[,host:port...]` (the broker's `--cluster` / `cluster.metadata`) or a list of `http://host:port`. */
  cluster: string | string[]
  /** The cluster's name: keys live under `/ferrolog/<clusterId>/`. Default "ferrolog". */
  clusterId?: string
  /** Deadline of each unary etcd call. Default 5000 ms. */
  requestTimeoutMs?: number
  /** TLS and user/password (default: plaintext, no authentication). */
  security?: EtcdSecurity
}

/** `etcd://h1:p1,h2:p2` -> [`http://h1:p1`, `http://h2:p2`]. */
export function parseClusterUrl(cluster: string | string[]): string[] {
  if (Array.isArray(cluster)) return cluster
  const endpoints = /^etcd:\/\/(.+)$/.exec(cluster.trim())?.[1]
  if (endpoints === undefined) throw new Error(`cluster.metadata must be etcd://HOST:PORT[,HOST:PORT...], got "${cluster}"`)
  return endpoints.split(',').map((hp) => {
    const host = hp.trim()
    if (!/^[^/:]+:\d+$/.test(host) && !/^\[[0-9a-fA-F:]+\]:\d+$/.test(host)) throw new Error(`invalid etcd endpoint "${host}" in "${cluster}"`)
    return `http://${host}`
  })
}

/** An etcd client and the cluster's namespace in it; `close()` ends both. */
export class EtcdConnection {
  readonly client: Etcd3
  /** All of the cluster's keys, relative to `/ferrolog/<clusterId>/`. */
  readonly ns: Namespace
  readonly prefix: string

  constructor(options: EtcdConnectOptions) {
    const timeout = options.requestTimeoutMs ?? 5000
    this.prefix = clusterPrefix(options.clusterId ?? 'ferrolog')
    const security = options.security ?? {}
    if ((security.cert === undefined) !== (security.key === undefined))
      throw new Error('an etcd client certificate and its key go together (cluster.metadata.ssl.certificate.location, cluster.metadata.ssl.key.location)')
    if (security.cert !== undefined && security.ca === undefined) throw new Error('an etcd client certificate needs TLS: set cluster.metadata.ssl.ca.location too')
    if ((security.username === undefined) !== (security.password === undefined)) throw new Error('cluster.metadata.username and cluster.metadata.password go together')
    const tls = security.ca !== undefined
    const hosts = parseClusterUrl(options.cluster).map((url) => (tls ? url.replace(/^http:\/\//, 'https://') : url))
    this.client = new Etcd3({
      hosts,
      ...(tls
        ? {
            credentials: {
              rootCertificate: Buffer.from(security.ca!),
              ...(security.cert !== undefined ? { certChain: Buffer.from(security.cert), privateKey: Buffer.from(security.key!) } : {}),
            },
          }
        : {}),
      ...(security.username !== undefined ? { auth: { username: security.username, password: security.password!, callOptions: () => ({ deadline: Date.now() + timeout }) } } : {}),
      dialTimeout: timeout,
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
      grpcOptions: {
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.min_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1000,
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5000,
        // gRPC's default of 4 MiB per answer is below a watch catching up on thousands of
        // partition changes at once; ranges are read in pages (etcd-metadata-store.ts).
        'grpc.max_receive_message_length': 64 * 1024 * 1024,
      },
      faultHandling: {
        host: () => noop,
        global: retry(handleWhen(isRecoverableError), {
          maxAttempts: 2,
          backoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 300 }),
        }),
        // etcd3 calls `.next()` on it as on its own default (a cockatiel backoff factory); its type says IBackoff.
        watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 1000 }) as unknown as IBackoff<unknown>,
      },
    })
    this.ns = this.client.namespace(this.prefix)
  }

  close(): void {
    this.client.close()
  }
}
