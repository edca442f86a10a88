/**
 * A MetadataStore (metadata-store.ts) held in this process, for tests' in-process clusters
 * (ts/server/embedded-cluster.ts); production clusters keep etcd. It behaves as etcd does for
 * what the cluster modules use (the conformance suite runs the same cases against both):
 * one revision for the store, versions and create/mod revisions per key, transactions applied
 * atomically, leases expired by timers (each deleting its keys at one revision), watches served
 * from the history and then live, delivered on a later turn of the event loop in revision order.
 *
 * Every call is applied when it is made (in call order) and answered on a later microtask, as an
 * answer from etcd would come. The history keeps the last {@link DEFAULT_HISTORY_REVISIONS}
 * revisions (older ones are compacted away, as etcd's auto-compaction does); `compact` drops more.
 * `close()` ends every lease timer and watch: nothing is left behind.
 */
import {
  MAX_TXN_OPS,
  LeaseNotFoundError,
  WatchCompactedError,
  type Compare,
  type KeyValue,
  type MetadataStore,
  type MetadataWatch,
  type RangeResult,
  type TxnOp,
  type TxnRequest,
  type TxnResult,
  type Value,
  type WatchEvent,
  type WatchListener,
  type WatchTarget,
} from './metadata-store.js'

/** Revisions of history kept for watches that start in the past. */
export const DEFAULT_HISTORY_REVISIONS = 10_000

interface Lease {
  readonly id: string
  readonly ttlSeconds: number
  readonly keys: Set<string>
  timer: NodeJS.Timeout
}

interface Watch {
  readonly matches: (key: string) => boolean
  readonly listener: WatchListener
  /** Events waiting for delivery, one array per revision. */
  pending: WatchEvent[][]
  scheduled: boolean
  cancelled: boolean
}

const EMPTY = Buffer.alloc(0)

export class InMemoryMetadataStore implements MetadataStore {
  private readonly kvs = new Map<string, KeyValue>()
  private readonly leases = new Map<string, Lease>()
  private readonly watches = new Set<Watch>()
  /** The events of each revision still kept, oldest first. */
  private readonly history: { revision: bigint; events: WatchEvent[] }[] = []
  private readonly historyRevisions: number
  private rev = 1n
  private compacted = 0n
  private nextLeaseId = 1
  private closed = false

  constructor(options: { historyRevisions?: number } = {}) {
    this.historyRevisions = options.historyRevisions ?? DEFAULT_HISTORY_REVISIONS
  }

  get revision(): bigint {
    return this.rev
  }

  async get(key: string): Promise<KeyValue | null> {
    this.checkOpen()
    return this.kvs.get(key) ?? null
  }

  async range(prefix: string): Promise<RangeResult> {
    this.checkOpen()
    return { kvs: this.keysWithPrefix(prefix).map((k) => this.kvs.get(k)!), revision: this.rev }
  }

  async put(key: string, value: Value, options: { lease?: string } = {}): Promise<bigint> {
    return (await this.txn({ compare: [], success: [{ type: 'put', key, value, ...(options.lease !== undefined ? { lease: options.lease } : {}) }] })).revision
  }

  async delete(key: string): Promise<bigint> {
    return (await this.txn({ compare: [], success: [{ type: 'delete', key }] })).revision
  }

  async txn(request: TxnRequest): Promise<TxnResult> {
    this.checkOpen()
    for (const ops of [request.success, request.failure ?? []]) {
      if (ops.length > MAX_TXN_OPS) throw new Error(`too many operations in txn request (${ops.length} > ${MAX_TXN_OPS})`)
    }
    const succeeded = request.compare.every((c) => this.holds(c))
    const ops = succeeded ? request.success : (request.failure ?? [])
    // Checked before anything changes: a failing operation fails the whole transaction.
    for (const o of ops) {
      if (o.type !== 'put') continue
      if (o.ignoreLease && !this.kvs.has(o.key)) throw new Error(`key not found: ignore_lease needs the key "${o.key}" to exist`)
      if (!o.ignoreLease && o.lease !== undefined && o.lease !== '0' && !this.leases.has(o.lease)) throw new LeaseNotFoundError(o.lease)
    }
    this.apply(ops)
    return { succeeded, revision: this.rev }
  }

  async grantLease(ttlSeconds: number): Promise<string> {
    this.checkOpen()
    if (!(ttlSeconds >= 1)) throw new Error(`a lease TTL is at least 1 s, got ${ttlSeconds}`)
    const id = String(this.nextLeaseId++)
    const lease: Lease = { id, ttlSeconds: Math.ceil(ttlSeconds), keys: new Set(), timer: this.expiryTimer(id, ttlSeconds) }
    this.leases.set(id, lease)
    return id
  }

  async keepAliveOnce(leaseId: string): Promise<number> {
    this.checkOpen()
    const lease = this.leases.get(leaseId)
    if (!lease) throw new LeaseNotFoundError(leaseId)
    clearTimeout(lease.timer)
    lease.timer = this.expiryTimer(leaseId, lease.ttlSeconds)
    return lease.ttlSeconds
  }

  async revokeLease(leaseId: string): Promise<void> {
    this.checkOpen()
    this.endLease(leaseId)
  }

  async watch(target: WatchTarget, options: { startRevision?: bigint }, listener: WatchListener): Promise<MetadataWatch> {
    this.checkOpen()
    const start = options.startRevision ?? this.rev + 1n
    if (start < this.compacted) {
      // As etcd: the watch is created, then cancelled.
      const error = new WatchCompactedError(`Watcher canceled: mvcc: required revision has been compacted (asked ${start}, compacted at ${this.compacted})`)
      let cancelled = false
      setImmediate(() => {
        if (!cancelled && !this.closed) listener.error?.(error)
      })
      return {
        cancel: async () => {
          cancelled = true
        },
      }
    }
    const matches = 'key' in target ? (k: string) => k === target.key : (k: string) => k.startsWith(target.prefix)
    const watch: Watch = { matches, listener, pending: [], scheduled: false, cancelled: false }
    for (const h of this.history) {
      if (h.revision < start) continue
      const events = h.events.filter((e) => matches(e.kv.key))
      if (events.length > 0) watch.pending.push(events)
    }
    this.watches.add(watch)
    this.schedule(watch)
    return {
      cancel: async () => {
        watch.cancelled = true
        this.watches.delete(watch)
      },
    }
  }

  /** Drops the history before `revision` (etcd's compaction): watches cannot start before it any more. */
  async compact(revision: bigint): Promise<void> {
    this.checkOpen()
    if (revision > this.rev) throw new Error(`mvcc: required revision is a future revision (${revision} > ${this.rev})`)
    if (revision <= this.compacted) throw new Error(`mvcc: required revision has been compacted (${revision} <= ${this.compacted})`)
    this.compacted = revision
    while (this.history.length > 0 && this.history[0]!.revision < revision) this.history.shift()
  }

  /** Ends every lease timer and watch; the store answers nothing any more. */
  close(): void {
    this.closed = true
    for (const lease of this.leases.values()) clearTimeout(lease.timer)
    this.leases.clear()
    for (const w of this.watches) w.cancelled = true
    this.watches.clear()
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('the in-memory metadata store is closed')
  }

  private holds(c: Compare): boolean {
    const kv = this.kvs.get(c.key)
    if (c.target === 'value') {
      if (!kv) return false // etcd: a value comparison on an absent key always fails
      return test(Buffer.compare(kv.value, Buffer.from(c.value)), c.op)
    }
    const actual = !kv ? 0n : c.target === 'version' ? kv.version : c.target === 'createRevision' ? kv.createRevision : kv.modRevision
    return test(actual < c.value ? -1 : actual > c.value ? 1 : 0, c.op)
  }

  /** Applies the writes at the next revision, if any of them changes something. */
  private apply(ops: readonly TxnOp[]): void {
    const revision = this.rev + 1n
    const events: WatchEvent[] = []
    for (const o of ops) {
      if (o.type === 'put') {
        const old = this.kvs.get(o.key)
        const lease = o.ignoreLease ? old!.lease : (o.lease ?? '0')
        if (old && old.lease !== lease) this.leases.get(old.lease)?.keys.delete(o.key)
        if (lease !== '0') this.leases.get(lease)!.keys.add(o.key)
        const kv: KeyValue = {
          key: o.key,
          value: Buffer.from(o.value),
          createRevision: old?.createRevision ?? revision,
          modRevision: revision,
          version: (old?.version ?? 0n) + 1n,
          lease,
        }
        this.kvs.set(o.key, kv)
        events.push({ type: 'put', kv })
      } else {
        for (const key of o.type === 'delete' ? (this.kvs.has(o.key) ? [o.key] : []) : this.keysWithPrefix(o.prefix)) {
          events.push(this.remove(key, revision))
        }
      }
    }
    if (events.length > 0) this.commit(revision, events)
  }

  private remove(key: string, revision: bigint): WatchEvent {
    const old = this.kvs.get(key)!
    this.kvs.delete(key)
    this.leases.get(old.lease)?.keys.delete(key)
    return { type: 'delete', kv: { key, value: EMPTY, createRevision: 0n, modRevision: revision, version: 0n, lease: '0' } }
  }

  private commit(revision: bigint, events: WatchEvent[]): void {
    this.rev = revision
    this.history.push({ revision, events })
    while (this.history.length > this.historyRevisions) this.compacted = this.history.shift()!.revision + 1n
    for (const w of this.watches) {
      const mine = events.filter((e) => w.matches(e.kv.key))
      if (mine.length === 0) continue
      w.pending.push(mine)
      this.schedule(w)
    }
  }

  private schedule(w: Watch): void {
    if (w.scheduled || w.pending.length === 0) return
    w.scheduled = true
    setImmediate(() => {
      w.scheduled = false
      while (!w.cancelled && w.pending.length > 0) w.listener.events(w.pending.shift()!)
    })
  }

  private expiryTimer(leaseId: string, ttlSeconds: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.endLease(leaseId), ttlSeconds * 1000)
    timer.unref()
    return timer
  }

  /** Revocation or expiry: the lease's keys go at one revision. */
  private endLease(leaseId: string): void {
    const lease = this.leases.get(leaseId)
    if (!lease) return
    clearTimeout(lease.timer)
    this.leases.delete(leaseId)
    if (lease.keys.size === 0) return
    const revision = this.rev + 1n
    const events = [...lease.keys].sort(byBytes).map((key) => this.remove(key, revision))
    this.commit(revision, events)
  }

  private keysWithPrefix(prefix: string): string[] {
    return [...this.kvs.keys()].filter((k) => k.startsWith(prefix)).sort(byBytes)
  }
}

function test(cmp: number, op: Compare['op']): boolean {
  switch (op) {
    case '==':
      return cmp === 0
    case '!=':
      return cmp !== 0
    case '>':
      return cmp > 0
    case '<':
      return cmp < 0
  }
}

function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}
