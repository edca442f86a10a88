/**
 * Kafka's NetworkClient for ferrolog: one connection per node, opened on first use, each
 * checked with ApiVersions before its first request (the versions then used are the highest
 * both sides serve, per ApiKey: node-api-versions.ts), requests pipelined on it with correlation
 * ids, a bound on those in flight and a timeout each (connection.ts).
 *
 * Nodes are the brokers of the last Metadata response (metadata.ts), by node id; the bootstrap
 * servers are nodes -1, -2, ... until then, as in Kafka, and stay usable to bootstrap again
 * when every known broker is unreachable. A connection that fails or closes is dropped; the next
 * request to that node reconnects after a backoff that grows with each failed attempt
 * (exponential-backoff.ts: 50 ms doubling to 1 s, 20% jitter) and is reset by a connection that
 * completes its ApiVersions. `ready(node)` waits out the backoff before it tries, so a caller that
 * loops on a failing node is paced without sleeping itself.
 *
 * `send(codec, version, request)` is the thin form for tests and tools that pick the version
 * themselves: it goes to the first bootstrap server.
 *
 * Security (`security`, client-security.ts): TLS wraps each connection (connection.ts); with
 * SASL the connection authenticates after its ApiVersions and before it is handed out
 * (sasl/sasl-authenticator.ts). When the broker gives the session a lifetime (KIP-368:
 * connections.max.reauth.ms, a token's expiry), the connection authenticates again at 85-95%
 * of it, as Kafka's client does, with no other request in between; a failed re-authentication
 * closes the connection (its requests fail, the next one reconnects and authenticates anew).
 * An authentication that fails is not retried: the caller gets SASL_AUTHENTICATION_FAILED (or
 * SSL_HANDSHAKE_FAILED, UNSUPPORTED_SASL_MECHANISM), whose message names no password or token.
 */
import { ApiKey, type ApiCodec } from '../protocol/apis/api.js'
import { apiVersionsCodec, type ApiVersionsRequest, type ApiVersionsResponse } from '../protocol/apis/api-versions.js'
import { metadataCodec, type MetadataRequest } from '../protocol/apis/metadata.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { PLAINTEXT_SECURITY, type ClientSaslOptions, type ClientSecurity } from './client-security.js'
import { KafkaConnection, type SendOptions, DEFAULT_REQUEST_TIMEOUT_MS } from './connection.js'
import { KafkaClientError } from './errors.js'
import { ExponentialBackoff, DEFAULT_RECONNECT_BACKOFF_MAX_MS, DEFAULT_RECONNECT_BACKOFF_MS } from './exponential-backoff.js'
import { Metadata, type Node } from './metadata.js'
import { NodeApiVersions } from './node-api-versions.js'
import { authenticate } from './sasl/sasl-authenticator.js'

export interface NetworkClientOptions {
  /** host:port, one or a list (or comma-separated), as bootstrap.servers. */
  bootstrapServers: string | string[]
  clientId?: string
  /** request.timeout.ms (30000). */
  requestTimeoutMs?: number
  /** max.in.flight.requests.per.connection (5). */
  maxInFlight?: number
  /** reconnect.backoff.ms (50) and reconnect.backoff.max.ms (1000). */
  reconnectBackoffMs?: number
  reconnectBackoffMaxMs?: number
  /** socket.connection.setup.timeout.ms (10000). */
  connectTimeoutMs?: number
  /** The name and version sent in ApiVersions v3+ (KIP-511). */
  clientSoftwareName?: string
  clientSoftwareVersion?: string
  /**
   * TLS and SASL (client-security.ts's clientSecurityFrom); default PLAINTEXT. A function is asked
   * at each new connection (a broker's inter-broker client: certificates reloaded while it runs
   * reach the connections opened after).
   */
  security?: ClientSecurity | (() => ClientSecurity)
}

export interface RequestOptions extends SendOptions {
  /** Use at most this version (e.g. Fetch below 13 without topic ids). */
  maxVersion?: number
}

/** A connection that completed its ApiVersions, and what the node serves. */
export interface ReadyConnection {
  connection: KafkaConnection
  versions: NodeApiVersions
}

interface NodeState {
  node: Node
  ready?: ReadyConnection
  connecting?: Promise<ReadyConnection>
  failedAttempts: number
  /** No connection attempt before this time (ms). */
  nextAttemptAt: number
}

/** Parses "host:port" (IPv6 in brackets or bare: the last colon splits). */
export function parseHostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':')
  const port = Number(address.slice(colon + 1))
  let host = address.slice(0, colon)
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535 || host === '') {
    throw new KafkaClientError('INVALID_REQUEST', `a bootstrap server must be host:port, not "${address}"`)
  }
  return { host, port }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.())

export class NetworkClient {
  readonly metadata = new Metadata()
  readonly clientId: string
  readonly requestTimeoutMs: number
  private readonly options: NetworkClientOptions
  private readonly backoff: ExponentialBackoff
  private readonly bootstrap: Node[]
  private readonly states = new Map<number, NodeState>()
  private readonly securityOf: () => ClientSecurity
  /** Re-authentications completed (KIP-368), for tests and metrics. */
  reauthentications = 0
  /**
   * The cluster's finalized features as the ApiVersions answers seen so far tell them (Kafka's
   * `ApiVersions.getFinalizedFeaturesInfo`): those of the answer with the highest epoch (-1: none
   * seen yet, or a broker answering below v3). Seen on each new connection: a change of the
   * levels reaches a client when it connects again, as Kafka's.
   */
  private finalized: { epoch: bigint; levels: Map<string, number> } = { epoch: -1n, levels: new Map() }
  private closed = false

  constructor(options: NetworkClientOptions) {
    this.options = options
    this.clientId = options.clientId ?? 'ferrolog'
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    const security = options.security ?? PLAINTEXT_SECURITY
    this.securityOf = typeof security === 'function' ? security : () => security
    this.backoff = new ExponentialBackoff(options.reconnectBackoffMs ?? DEFAULT_RECONNECT_BACKOFF_MS, options.reconnectBackoffMaxMs ?? DEFAULT_RECONNECT_BACKOFF_MAX_MS)
    const servers = (Array.isArray(options.bootstrapServers) ? options.bootstrapServers : [options.bootstrapServers])
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter((s) => s !== '')
    if (servers.length === 0) throw new KafkaClientError('INVALID_REQUEST', 'no bootstrap server given')
    this.bootstrap = servers.map((s, i) => ({ nodeId: -(i + 1), ...parseHostPort(s), rack: null }))
  }

  /** A client whose first bootstrap server answered ApiVersions (for the thin `send`). */
  static async connect(bootstrap: string, options: Omit<NetworkClientOptions, 'bootstrapServers'> = {}): Promise<NetworkClient> {
    const client = new NetworkClient({ clientId: 'ferrolog-cli', ...options, bootstrapServers: bootstrap })
    try {
      await client.ready(client.bootstrap[0]!.nodeId)
    } catch (err) {
      await client.close()
      throw err
    }
    return client
  }

  /** The bootstrap servers, as nodes -1, -2, ... */
  get bootstrapNodes(): readonly Node[] {
    return this.bootstrap
  }

  /** A node by id: a broker of the last Metadata response, or a bootstrap server. */
  node(nodeId: number): Node | undefined {
    return nodeId < 0 ? this.bootstrap[-nodeId - 1] : this.metadata.node(nodeId)
  }

  /** Whether `nodeId` has a connection that completed ApiVersions and is open. */
  isReady(nodeId: number): boolean {
    return this.states.get(nodeId)?.ready?.connection.isOpen === true
  }

  /**
   * A ready connection to `nodeId`: the open one, or a new one once its backoff elapsed, checked
   * with ApiVersions. Rejects with CONNECTION_REFUSED (retriable) when the node cannot be reached.
   */
  async ready(nodeId: number): Promise<ReadyConnection> {
    if (this.closed) throw new KafkaClientError('CLIENT_CLOSED', 'the client is closed')
    const node = this.node(nodeId)
    if (!node) throw new KafkaClientError('LEADER_NOT_AVAILABLE', `node ${nodeId} is not in the metadata`)
    let state = this.states.get(nodeId)
    if (!state || state.node.host !== node.host || state.node.port !== node.port) {
      // the connection to the node's old address closes in the background (its close never rejects)
      void state?.ready?.connection.close()
      state = { node, failedAttempts: 0, nextAttemptAt: 0 }
      this.states.set(nodeId, state)
    }
    if (state.ready?.connection.isOpen) return state.ready
    state.connecting ??= this.connectNode(state)
    return state.connecting
  }

  private async connectNode(state: NodeState): Promise<ReadyConnection> {
    try {
      const wait = state.nextAttemptAt - Date.now()
      if (wait > 0) await sleep(wait)
      if (this.closed) throw new KafkaClientError('CLIENT_CLOSED', 'the client is closed')
      const { host, port } = state.node
      const security = this.securityOf()
      const connection = await KafkaConnection.open(host, port, {
        clientId: this.clientId,
        maxInFlight: this.options.maxInFlight,
        connectTimeoutMs: this.options.connectTimeoutMs,
        tls: security.tls,
      })
      let versions: NodeApiVersions
      let sessionLifetimeMs = 0
      try {
        versions = await this.negotiate(connection)
        if (security.sasl) sessionLifetimeMs = (await authenticate(connection, versions, security.sasl, { timeoutMs: this.requestTimeoutMs })).sessionLifetimeMs
      } catch (err) {
        await connection.close()
        throw err
      }
      if (this.closed) {
        await connection.close()
        throw new KafkaClientError('CLIENT_CLOSED', 'the client is closed')
      }
      const ready = { connection, versions }
      state.ready = ready
      state.failedAttempts = 0
      const reauth = this.scheduleReauthentication(ready, security.sasl, sessionLifetimeMs)
      connection.onClose(() => {
        reauth.cancel()
        if (state.ready !== ready) return
        state.ready = undefined
        this.scheduleReconnect(state)
      })
      return ready
    } catch (err) {
      this.scheduleReconnect(state)
      throw err
    } finally {
      state.connecting = undefined
    }
  }

  /**
   * KIP-368: authenticates `ready` again at 85-95% of the session's lifetime (as Kafka's
   * SaslClientAuthenticator picks it), then again for the new session; closes the connection
   * when that fails.
   */
  private scheduleReauthentication(ready: ReadyConnection, sasl: ClientSaslOptions | undefined, sessionLifetimeMs: number): { cancel(): void } {
    let timer: NodeJS.Timeout | undefined
    const schedule = (lifetimeMs: number) => {
      if (lifetimeMs <= 0 || !sasl) return
      timer = setTimeout(() => void reauthenticate(), lifetimeMs * (0.85 + 0.1 * Math.random()))
      timer.unref?.()
    }
    const reauthenticate = async () => {
      const { connection, versions } = ready
      if (!connection.isOpen || this.closed) return
      try {
        const session = await connection.exclusive(() => authenticate(connection, versions, sasl!, { timeoutMs: this.requestTimeoutMs, exclusive: true }))
        this.reauthentications++
        schedule(session.sessionLifetimeMs)
      } catch (err) {
        const e = err instanceof KafkaClientError ? err : new KafkaClientError('SASL_AUTHENTICATION_FAILED', `re-authentication to ${connection.address} failed: ${(err as Error).message}`)
        connection.abort(e)
      }
    }
    schedule(sessionLifetimeMs)
    return { cancel: () => clearTimeout(timer) }
  }

  private scheduleReconnect(state: NodeState): void {
    state.nextAttemptAt = Date.now() + this.backoff.backoff(state.failedAttempts)
    state.failedAttempts++
  }

  /** ApiVersions at the newest version this client speaks, again at the broker's if it refuses. */
  private async negotiate(connection: KafkaConnection): Promise<NodeApiVersions> {
    const request: ApiVersionsRequest = {
      clientSoftwareName: this.options.clientSoftwareName ?? 'ferrolog',
      clientSoftwareVersion: this.options.clientSoftwareVersion ?? '0.1.0',
      clusterId: null, // v5+, not served
      nodeId: -1,
    }
    const timeoutMs = this.requestTimeoutMs
    let res: ApiVersionsResponse = await connection.send(apiVersionsCodec, apiVersionsCodec.maxVersion, request, { timeoutMs })
    if (res.errorCode === ErrorCode.UNSUPPORTED_VERSION) {
      const theirs = res.apiKeys.find((a) => a.apiKey === ApiKey.ApiVersions)
      const version = Math.min(theirs?.maxVersion ?? 0, apiVersionsCodec.maxVersion)
      res = await connection.send(apiVersionsCodec, version, request, { timeoutMs })
    }
    if (res.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(res.errorCode, `ApiVersions from ${connection.address}`)
    if (res.finalizedFeaturesEpoch > this.finalized.epoch) {
      this.finalized = { epoch: res.finalizedFeaturesEpoch, levels: new Map(res.finalizedFeatures.map((f) => [f.name, f.maxVersionLevel])) }
    }
    return new NodeApiVersions(res.apiKeys)
  }

  /** The epoch of the finalized features known (see `finalized`); -1 before any. */
  get finalizedFeaturesEpoch(): bigint {
    return this.finalized.epoch
  }

  /** A finalized feature's level as last seen; undefined when not finalized (or nothing seen). */
  finalizedFeatureLevel(name: string): number | undefined {
    return this.finalized.levels.get(name)
  }

  /** The version of `codec` that a request to `nodeId` would use now (the node must be ready). */
  versionFor(nodeId: number, codec: ApiCodec<unknown, unknown>, maxVersion?: number): number {
    const ready = this.states.get(nodeId)?.ready
    if (!ready) throw new KafkaClientError('NETWORK_EXCEPTION', `node ${nodeId} is not connected`)
    return ready.versions.latestUsableVersion(codec, maxVersion)
  }

  /**
   * Sends a request to `nodeId` at the highest version both sides serve. `request` may be a
   * function of that version, for requests whose shape depends on it.
   */
  async request<Req, Res>(nodeId: number, codec: ApiCodec<Req, Res>, request: Req | ((version: number) => Req), options: RequestOptions = {}): Promise<Res> {
    const { connection, versions } = await this.ready(nodeId)
    const version = versions.latestUsableVersion(codec, options.maxVersion)
    const body = typeof request === 'function' ? (request as (version: number) => Req)(version) : request
    return connection.send(codec, version, body, { timeoutMs: this.requestTimeoutMs, ...options })
  }

  /** Like `request`, for a request the broker does not answer (Produce acks=0). */
  async requestOneWay<Req>(nodeId: number, codec: ApiCodec<Req, unknown>, request: Req | ((version: number) => Req), options: RequestOptions = {}): Promise<void> {
    const { connection, versions } = await this.ready(nodeId)
    const version = versions.latestUsableVersion(codec, options.maxVersion)
    const body = typeof request === 'function' ? (request as (version: number) => Req)(version) : request
    return connection.sendOneWay(codec, version, body, options)
  }

  /** Sends one request at exactly `version` to the first bootstrap server. */
  async send<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req, options: SendOptions = {}): Promise<Res> {
    const { connection } = await this.ready(this.bootstrap[0]!.nodeId)
    return connection.send(codec, version, request, { timeoutMs: this.requestTimeoutMs, ...options })
  }

  /** Writes a request at exactly `version` to the first bootstrap server, expecting no answer. */
  async sendOneWay<Req>(codec: ApiCodec<Req, unknown>, version: number, request: Req): Promise<void> {
    const { connection } = await this.ready(this.bootstrap[0]!.nodeId)
    return connection.sendOneWay(codec, version, request)
  }

  /**
   * Nodes to ask for cluster-wide things, best first (Kafka's leastLoadedNode): connected ones
   * with the fewest requests pending, then the other brokers, then the bootstrap servers.
   */
  candidateNodes(): number[] {
    const brokers = this.metadata.nodes.map((n) => n.nodeId)
    const pending = (id: number) => this.states.get(id)?.ready?.connection.pendingCount ?? Infinity
    const due = (id: number) => this.states.get(id)?.nextAttemptAt ?? 0
    const order = (ids: number[]) => ids.sort((a, b) => pending(a) - pending(b) || due(a) - due(b))
    return [...order(brokers), ...order(this.bootstrap.map((n) => n.nodeId))]
  }

  /**
   * Asks for `topics` (null: all) and takes the answer into `metadata`; tries each candidate node
   * until one answers. Resolves with the client's metadata.
   */
  async refreshMetadata(topics: string[] | null, options: { allowAutoTopicCreation?: boolean } = {}): Promise<Metadata> {
    const build = (version: number): MetadataRequest => ({
      topics: topics === null ? (version === 0 ? [] : null) : topics.map((name) => ({ topicId: Buffer.alloc(16), name })),
      allowAutoTopicCreation: options.allowAutoTopicCreation ?? false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    })
    let last: unknown
    for (const nodeId of this.candidateNodes()) {
      try {
        const res = await this.request(nodeId, metadataCodec, build)
        this.metadata.update(res, topics === null)
        return this.metadata
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        last = err
      }
    }
    throw last ?? new KafkaClientError('NETWORK_EXCEPTION', 'no node to ask for metadata')
  }

  /** Closes every connection; pending requests fail with CLIENT_CLOSED. */
  async close(): Promise<void> {
    this.closed = true
    const closing: Promise<void>[] = []
    for (const state of this.states.values()) {
      if (state.ready) closing.push(state.ready.connection.close())
      if (state.connecting)
        closing.push(
          state.connecting.then(
            (r) => r.connection.close(),
            () => undefined,
          ),
        )
    }
    this.states.clear()
    await Promise.all(closing)
  }
}
