/**
 * A broker's registration in the cluster (Kafka's `BrokerLifecycleManager` with the ZooKeeper
 * era's ephemeral `/brokers/ids/<id>`): the key `brokers/<id>` (ts/cluster/keys.ts), holding a
 * {@link BrokerRecord}, written under an etcd lease whose TTL is `broker.session.timeout.ms`
 * (rounded up to whole seconds, etcd's unit). The lease is kept alive every TTL/3; when the broker
 * dies its lease expires and the key vanishes, which is how the controller learns of the death.
 *
 * Fencing: the broker knows its lease is valid until `sent + TTL` of the last keep-alive etcd
 * answered (`sent` being when that keep-alive left, a bound etcd's own expiry can only be
 * later than). When that moment passes without a newer answer, or etcd says the lease is gone,
 * the broker is fenced: `'fenced'` is emitted and it must stop acting as a leader, since the
 * controller may already have moved its partitions. It then registers again with a new lease
 * (`'registered'`, with a new broker epoch) as soon as etcd answers.
 *
 * The broker epoch is the etcd revision of the registration write (the key's mod revision); a new
 * registration always has a higher one. A registration by another process with the same node.id
 * (another incarnation id) while that one is alive is refused with DuplicateBrokerRegistrationError
 * (Kafka's DUPLICATE_BROKER_REGISTRATION).
 *
 * Controlled shutdown (`controlledShutdown`): the broker writes `shutdown/<id>` under its lease; the
 * controller moves the leadership of every partition it leads to another ISR member and takes it
 * out of the ISRs, then marks the request done; the call resolves then, or rejects with
 * REQUEST_TIMED_OUT after `timeoutMs`.
 */
import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { ErrorCode } from '../protocol/error-codes.js'
import type { ListenerEndPointInfo } from '../replica/partition-registration.js'
import { ClusterMetadataError, DuplicateBrokerRegistrationError } from './errors.js'
import { brokerKey, decode, encode, shutdownKey, type BrokerRecord, type ShutdownRecord } from './keys.js'
import { LeaseNotFoundError, compare, op, type MetadataStore, type MetadataWatch } from './metadata-store.js'

/** Kafka's `broker.session.timeout.ms` default. */
export const DEFAULT_BROKER_SESSION_TIMEOUT_MS = 9000

export interface BrokerRegistrationOptions {
  store: MetadataStore
  /** `node.id`. */
  brokerId: number
  /** The advertised listener's host and port. */
  host: string
  port: number
  /** `broker.rack`. */
  rack?: string | null
  /** `broker.session.timeout.ms`: the lease TTL (whole seconds, at least 1). Default 9000. */
  sessionTimeoutMs?: number
  /**
   * How long `register()` keeps trying while another incarnation's registration of this node.id is
   * still live (a broker restarted faster than its old lease expired). Default 0: refuse at once.
   */
  registrationTimeoutMs?: number
}

export interface BrokerRegistrationEvents {
  /** Registered (first time or again after a fence); the new broker epoch. */
  registered: [brokerEpoch: bigint]
  /** The lease is (or may be) gone: stop acting as leader until `registered`. */
  fenced: [reason: Error]
  /** A re-registration was refused (another incarnation holds the node.id); it is retried. */
  registrationRefused: [error: DuplicateBrokerRegistrationError]
}

export class BrokerRegistration extends EventEmitter<BrokerRegistrationEvents> {
  readonly brokerId: number
  /** This process's incarnation id (Kafka's `incarnationId`). */
  readonly incarnationId = randomUUID()
  readonly ttlSeconds: number
  private readonly store: MetadataStore
  private record: BrokerRecord
  private readonly registrationTimeoutMs: number
  /** The lease of the current (or last) registration. */
  private leaseIdValue: string | null = null
  private epoch: bigint | null = null
  private validUntil = 0
  private keepAliveTimer: NodeJS.Timeout | null = null
  private fenceTimer: NodeJS.Timeout | null = null
  private retryTimer: NodeJS.Timeout | null = null
  private closed = false

  constructor(options: BrokerRegistrationOptions) {
    super()
    this.store = options.store
    this.brokerId = options.brokerId
    if (!Number.isInteger(this.brokerId) || this.brokerId < 0) throw new Error(`node.id must be a non-negative integer, got ${this.brokerId}`)
    this.ttlSeconds = Math.max(1, Math.ceil((options.sessionTimeoutMs ?? DEFAULT_BROKER_SESSION_TIMEOUT_MS) / 1000))
    this.registrationTimeoutMs = options.registrationTimeoutMs ?? 0
    this.record = { id: this.brokerId, host: options.host, port: options.port, rack: options.rack ?? null, incarnationId: this.incarnationId }
  }

  /**
   * Sets the end point registered (before `register`: a broker listening on port 0 knows its
   * port only once it listens).
   */
  setEndPoint(host: string, port: number, listeners?: ListenerEndPointInfo[]): void {
    if (this.epoch !== null) throw new Error(`broker ${this.brokerId} is registered already: its end point cannot change`)
    this.record = { ...this.record, host, port, ...(listeners ? { listeners } : {}) }
  }

  /**
   * Whether this broker may act as a leader now: registered, and its lease certainly not expired
   * (the last answered keep-alive's send time + TTL is still ahead). Checked on every leader
   * write, so a broker resuming after a pause longer than its lease refuses writes at once, before
   * its fence timer had a chance to run.
   */
  get leaseValid(): boolean {
    return this.epoch !== null && Date.now() < this.validUntil
  }

  /** The current broker epoch; null while fenced or not registered. */
  get brokerEpoch(): bigint | null {
    return this.epoch
  }

  /** The etcd lease of the current registration (the controller key is put under it); null while fenced. */
  get leaseId(): string | null {
    return this.epoch === null ? null : this.leaseIdValue
  }

  get fenced(): boolean {
    return this.epoch === null
  }

  /**
   * Registers the broker and starts keeping the lease alive. Resolves to the broker epoch; rejects
   * with DuplicateBrokerRegistrationError when another live broker holds the node.id (after
   * `registrationTimeoutMs`), or the etcd error when etcd cannot be reached.
   */
  async register(): Promise<bigint> {
    const deadline = Date.now() + this.registrationTimeoutMs
    for (;;) {
      try {
        return await this.attempt()
      } catch (e) {
        if (!(e instanceof DuplicateBrokerRegistrationError) || Date.now() >= deadline) throw e
        await new Promise((r) => setTimeout(r, Math.min(500, this.ttlSeconds * 250)))
      }
    }
  }

  /** One registration: a fresh lease, then the key written if absent or still our own. */
  private async attempt(): Promise<bigint> {
    if (this.closed) throw new Error('broker registration is closed')
    const store = this.store
    const key = brokerKey(this.brokerId)
    const sentAt = Date.now()
    const leaseId = await store.grantLease(this.ttlSeconds)
    try {
      const kv = await store.get(key)
      let guard
      if (!kv) {
        guard = compare.createRevision(key, '==', 0)
      } else {
        const holder = decode<BrokerRecord>(kv.value)
        if (holder.incarnationId !== this.incarnationId) {
          throw new DuplicateBrokerRegistrationError(this.brokerId, `incarnation ${holder.incarnationId} at ${holder.host}:${holder.port}`)
        }
        guard = compare.modRevision(key, '==', kv.modRevision)
      }
      const res = await store.txn({ compare: [guard], success: [op.put(key, encode(this.record), leaseId)] })
      if (!res.succeeded) throw new ClusterMetadataError(ErrorCode.REQUEST_TIMED_OUT, `broker ${this.brokerId}: registration raced with another write, retrying`)
      const old = this.leaseIdValue
      this.leaseIdValue = leaseId
      this.epoch = res.revision
      this.renewed(sentAt, this.ttlSeconds)
      this.scheduleKeepAlive()
      // The lease we had before (if etcd still has it) would take the controller key with it.
      if (old !== null) store.revokeLease(old).catch(() => {})
      this.emit('registered', this.epoch)
      return this.epoch
    } catch (e) {
      store.revokeLease(leaseId).catch(() => {})
      throw e
    }
  }

  private renewed(sentAt: number, ttlSeconds: number): void {
    this.validUntil = sentAt + ttlSeconds * 1000
    if (this.fenceTimer) clearTimeout(this.fenceTimer)
    this.fenceTimer = setTimeout(
      () => this.fence(new ClusterMetadataError(ErrorCode.REQUEST_TIMED_OUT, `broker ${this.brokerId}: no lease keep-alive answered within ${this.ttlSeconds} s; the lease may have expired`)),
      Math.max(0, this.validUntil - Date.now()),
    )
  }

  private scheduleKeepAlive(): void {
    if (this.keepAliveTimer) clearTimeout(this.keepAliveTimer)
    this.keepAliveTimer = setTimeout(() => void this.keepAlive(), (this.ttlSeconds * 1000) / 3)
  }

  private async keepAlive(): Promise<void> {
    const lease = this.leaseIdValue
    if (this.closed || lease === null || this.epoch === null) return
    const sentAt = Date.now()
    try {
      const ttl = await withTimeout(this.store.keepAliveOnce(lease), (this.ttlSeconds * 1000) / 3)
      if (lease !== this.leaseIdValue || this.epoch === null) return
      this.renewed(sentAt, ttl)
    } catch (e) {
      if (lease !== this.leaseIdValue || this.epoch === null) return
      // LeaseNotFoundError: etcd no longer has the lease. Anything else: etcd is away; keep
      // trying until the fence timer says the lease may be gone.
      if (e instanceof LeaseNotFoundError) {
        this.fence(new ClusterMetadataError(ErrorCode.REQUEST_TIMED_OUT, `broker ${this.brokerId}: etcd expired the lease`, { cause: e }))
        return
      }
    }
    this.scheduleKeepAlive()
  }

  /** Fences the broker and starts registering again. */
  private fence(reason: Error): void {
    if (this.closed || this.epoch === null) return
    this.epoch = null
    if (this.keepAliveTimer) clearTimeout(this.keepAliveTimer)
    if (this.fenceTimer) clearTimeout(this.fenceTimer)
    this.keepAliveTimer = this.fenceTimer = null
    this.emit('fenced', reason)
    this.scheduleReregister()
  }

  private scheduleReregister(): void {
    if (this.closed) return
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = null
        this.attempt().catch((e) => {
          if (e instanceof DuplicateBrokerRegistrationError) this.emit('registrationRefused', e)
          this.scheduleReregister()
        })
      },
      Math.max(100, (this.ttlSeconds * 1000) / 6),
    )
  }

  /**
   * Controlled shutdown (Kafka's ControlledShutdown request): asks the controller to move this
   * broker's leadership away and take it out of the ISRs; resolves when the controller reports it
   * done, to the etcd revision of that report (later than every move it made), and rejects with
   * REQUEST_TIMED_OUT after `timeoutMs` (the broker then shuts down anyway).
   */
  async controlledShutdown(timeoutMs: number): Promise<bigint> {
    const leaseId = this.leaseId
    if (!leaseId) throw new ClusterMetadataError(ErrorCode.BROKER_NOT_AVAILABLE, `broker ${this.brokerId} is not registered (fenced)`)
    const store = this.store
    const key = shutdownKey(this.brokerId)
    let watcher: MetadataWatch | null = null
    let timer: NodeJS.Timeout | undefined
    try {
      return await new Promise<bigint>((resolve, reject) => {
        timer = setTimeout(
          () => reject(new ClusterMetadataError(ErrorCode.REQUEST_TIMED_OUT, `broker ${this.brokerId}: controlled shutdown not done by the controller within ${timeoutMs} ms`)),
          timeoutMs,
        )
        const check = (value: Buffer, modRevision: bigint) => {
          const r = decode<ShutdownRecord>(value)
          if (r.done && r.incarnationId === this.incarnationId) resolve(modRevision)
        }
        ;(async () => {
          watcher = await store.watch({ key }, {}, { events: (events) => events.forEach((e) => e.type === 'put' && check(e.kv.value, e.kv.modRevision)) })
          const request: ShutdownRecord = { brokerId: this.brokerId, incarnationId: this.incarnationId, done: false }
          await store.put(key, encode(request), { lease: leaseId })
        })().catch(reject)
      })
    } finally {
      clearTimeout(timer)
      if (watcher) await (watcher as MetadataWatch).cancel().catch(() => {})
    }
  }

  /** Stops keeping the lease alive and revokes it: the registration (and the controller key, if held) vanish at once. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const t of [this.keepAliveTimer, this.fenceTimer, this.retryTimer]) if (t) clearTimeout(t)
    this.epoch = null
    const lease = this.leaseIdValue
    this.leaseIdValue = null
    if (lease !== null) await this.store.revokeLease(lease).catch(() => {})
  }

  /** Stops keeping the lease alive without revoking it (it expires after its TTL, as a crash would). */
  abandon(): void {
    this.closed = true
    for (const t of [this.keepAliveTimer, this.fenceTimer, this.retryTimer]) if (t) clearTimeout(t)
    this.epoch = null
    this.leaseIdValue = null
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)
    }),
  ])
}
