/**
 * The MetadataStore (metadata-store.ts) of a production cluster: etcd, through the `etcd3` client
 * of an EtcdConnection (etcd-client.ts), every key under the connection's prefix
 * (`/ferrolog/<clusterId>/`). Reads, writes and transactions are etcd's KV calls with the prefix
 * applied here; leases are etcd's Lease calls; watches are the client's watchers, reporting a
 * broken stream (`disconnected`) and a cancellation by etcd (`error`: a compacted start
 * revision among them) to the listener.
 */
import { CompareResult, CompareTarget, EtcdLeaseInvalidError, Range, type ICompare, type IKeyValue, type IRequestOp, type Watcher } from 'etcd3'
import { EtcdConnection, type EtcdConnectOptions } from './etcd-client.js'
import {
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

const COMPARE_RESULT = { '==': CompareResult.Equal, '!=': CompareResult.NotEqual, '>': CompareResult.Greater, '<': CompareResult.Less } as const

/**
 * Keys per range request. A broker loads the whole prefix at start (and after a compacted
 * watch): 100,000 partitions are some 15 MB of keys and values, past gRPC's 4 MiB answer limit,
 * so a range is read in pages of this many keys, every page at the first page's revision.
 */
export const RANGE_PAGE_KEYS = 5000

export interface EtcdMetadataStoreOptions {
  /** Keys per range request (RANGE_PAGE_KEYS). */
  rangePageKeys?: number
}

export class EtcdMetadataStore implements MetadataStore {
  readonly connection: EtcdConnection
  private readonly prefix: Buffer
  private readonly rangePageKeys: number

  constructor(connection: EtcdConnection, options: EtcdMetadataStoreOptions = {}) {
    this.connection = connection
    this.prefix = Buffer.from(connection.prefix)
    this.rangePageKeys = options.rangePageKeys ?? RANGE_PAGE_KEYS
  }

  /** A store on a new connection (closed with the store). */
  static connect(options: EtcdConnectOptions, storeOptions: EtcdMetadataStoreOptions = {}): EtcdMetadataStore {
    return new EtcdMetadataStore(new EtcdConnection(options), storeOptions)
  }

  async get(key: string): Promise<KeyValue | null> {
    const res = await this.connection.ns.kv.range({ key: this.key(key) })
    const kv = res.kvs[0]
    return kv ? this.toKeyValue(kv) : null
  }

  /** The prefix's keys at one revision, read in pages of `rangePageKeys` (a compaction between two pages fails the read). */
  async range(prefix: string): Promise<RangeResult> {
    const range = Range.prefix(this.key(prefix))
    const kvs: KeyValue[] = []
    let start = range.start
    let revision: bigint | null = null
    for (;;) {
      const res = await this.connection.ns.kv.range({
        key: start,
        range_end: range.end,
        limit: String(this.rangePageKeys),
        ...(revision !== null ? { revision: revision.toString() } : {}),
      })
      revision ??= BigInt(res.header.revision)
      for (const kv of res.kvs) kvs.push(this.toKeyValue(kv))
      const last = res.kvs.at(-1)
      if (!res.more || !last) return { kvs, revision }
      // The next page starts right after the last key read.
      start = Buffer.concat([last.key, Buffer.from([0])])
    }
  }

  async put(key: string, value: Value, options: { lease?: string } = {}): Promise<bigint> {
    try {
      const res = await this.connection.ns.kv.put({ key: this.key(key), value: Buffer.from(value), ...(options.lease !== undefined ? { lease: options.lease } : {}) })
      return BigInt(res.header.revision)
    } catch (e) {
      throw leaseError(e, options.lease)
    }
  }

  async delete(key: string): Promise<bigint> {
    const res = await this.connection.ns.kv.deleteRange({ key: this.key(key) })
    return BigInt(res.header.revision)
  }

  async txn(request: TxnRequest): Promise<TxnResult> {
    try {
      const res = await this.connection.ns.kv.txn({
        compare: request.compare.map((c) => this.compare(c)),
        success: request.success.map((o) => this.requestOp(o)),
        failure: (request.failure ?? []).map((o) => this.requestOp(o)),
      })
      return { succeeded: res.succeeded, revision: BigInt(res.header.revision) }
    } catch (e) {
      const leased = [...request.success, ...(request.failure ?? [])].find((o): o is Extract<TxnOp, { type: 'put' }> => o.type === 'put' && o.lease !== undefined)
      throw leaseError(e, leased?.lease)
    }
  }

  async grantLease(ttlSeconds: number): Promise<string> {
    const res = await this.connection.ns.leaseClient.leaseGrant({ TTL: ttlSeconds })
    return res.ID
  }

  async keepAliveOnce(leaseId: string): Promise<number> {
    const stream = await this.connection.ns.leaseClient.leaseKeepAlive()
    try {
      const res = await new Promise<{ ID: string; TTL: string }>((resolve, reject) => {
        stream.on('data', resolve)
        stream.on('error', reject)
        stream.write({ ID: leaseId })
      })
      // etcd answers TTL 0 for a lease it no longer has.
      if (res.TTL === '0') throw new LeaseNotFoundError(leaseId)
      return Number(res.TTL)
    } catch (e) {
      throw leaseError(e, leaseId)
    } finally {
      stream.end()
    }
  }

  async revokeLease(leaseId: string): Promise<void> {
    try {
      await this.connection.ns.leaseClient.leaseRevoke({ ID: leaseId })
    } catch (e) {
      if (!(e instanceof EtcdLeaseInvalidError)) throw e
    }
  }

  async watch(target: WatchTarget, options: { startRevision?: bigint }, listener: WatchListener): Promise<MetadataWatch> {
    let builder = this.connection.ns.watch()
    builder = 'key' in target ? builder.key(target.key) : builder.prefix(target.prefix)
    if (options.startRevision !== undefined) builder = builder.startRevision(options.startRevision.toString())
    const watcher: Watcher = builder.watcher()
    let created = false
    let cancelled = false
    /** etcd cancelled the watch: the client has let go of it already. */
    let ended = false
    const ready = new Promise<void>((resolve, reject) => {
      watcher.once('connected', () => {
        created = true
        resolve()
      })
      watcher.on('error', (e: Error) => {
        ended = true
        if (!created) return reject(e)
        // etcd cancels a watch whose start revision was compacted with no reason the client
        // passes on: a read at that revision tells.
        void this.compactedSince(options.startRevision).then((compacted) => {
          if (!cancelled) listener.error?.(compacted ? new WatchCompactedError(`${e.message}mvcc: required revision has been compacted`, { cause: e }) : e)
        })
      })
    })
    watcher.on('data', (res) => {
      if (cancelled) return
      // The watcher's own listener (registered first) has taken the namespace off the keys.
      const events: WatchEvent[] = res.events.map((ev) => ({ type: ev.type === 'Delete' ? 'delete' : 'put', kv: toKeyValue(ev.kv, ev.kv.key.toString('utf8')) }))
      if (events.length > 0) listener.events(events)
    })
    watcher.on('disconnected', (e: Error) => {
      if (!cancelled) listener.disconnected?.(e)
    })
    const cancel = async () => {
      if (cancelled) return
      cancelled = true
      if (!ended) await watcher.cancel().catch(() => undefined)
    }
    try {
      await ready
    } catch (e) {
      await cancel()
      throw e
    }
    return { cancel }
  }

  private async compactedSince(revision: bigint | undefined): Promise<boolean> {
    if (revision === undefined) return false
    try {
      await this.connection.ns.kv.range({ key: this.prefix, revision: revision.toString() })
      return false
    } catch (e) {
      return /compacted/.test((e as Error).message)
    }
  }

  /** etcd's compaction (tests: a watch resuming from a compacted revision). */
  async compact(revision: bigint): Promise<void> {
    await this.connection.client.kv.compact({ revision: revision.toString(), physical: true })
  }

  close(): void {
    this.connection.close()
  }

  private key(key: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(key)])
  }

  private toKeyValue(kv: IKeyValue): KeyValue {
    return toKeyValue(kv, kv.key.subarray(this.prefix.length).toString('utf8'))
  }

  private compare(c: Compare): ICompare {
    const base = { key: this.key(c.key), result: COMPARE_RESULT[c.op] }
    switch (c.target) {
      case 'version':
        return { ...base, target: CompareTarget.Version, version: c.value.toString() }
      case 'createRevision':
        return { ...base, target: CompareTarget.Create, create_revision: c.value.toString() }
      case 'modRevision':
        return { ...base, target: CompareTarget.Mod, mod_revision: c.value.toString() }
      case 'value':
        return { ...base, target: CompareTarget.Value, value: Buffer.from(c.value) }
    }
  }

  private requestOp(o: TxnOp): IRequestOp {
    switch (o.type) {
      case 'put':
        return { request_put: { key: this.key(o.key), value: Buffer.from(o.value), ...(o.ignoreLease ? { ignore_lease: true } : o.lease !== undefined ? { lease: o.lease } : {}) } }
      case 'delete':
        return { request_delete_range: { key: this.key(o.key) } }
      case 'deletePrefix': {
        const range = Range.prefix(this.key(o.prefix))
        return { request_delete_range: { key: range.start, range_end: range.end } }
      }
    }
  }
}

function toKeyValue(kv: IKeyValue, key: string): KeyValue {
  return {
    key,
    value: kv.value,
    createRevision: BigInt(kv.create_revision),
    modRevision: BigInt(kv.mod_revision),
    version: BigInt(kv.version),
    lease: kv.lease,
  }
}

/** etcd's "requested lease not found" as LeaseNotFoundError; anything else unchanged. */
function leaseError(e: unknown, leaseId: string | undefined): unknown {
  if (e instanceof EtcdLeaseInvalidError && !(e instanceof LeaseNotFoundError)) return new LeaseNotFoundError(leaseId ?? '?', { cause: e })
  return e
}
