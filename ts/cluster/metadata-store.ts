/**
 * The key-value store cluster metadata lives in: exactly the part of etcd's v3 API the cluster
 * modules use, with etcd's semantics, so that they run unchanged over etcd (etcd-metadata-store.ts,
 * production) or in this process (in-memory-metadata-store.ts, tests' in-process clusters).
 * __test__/cluster/metadata-store-conformance.test.ts runs the same cases against both.
 *
 * Keys are strings relative to the cluster's namespace (`/ferrolog/<clusterId>/` in etcd);
 * values are bytes. Semantics, as etcd's:
 * - One store-wide revision, 1 when empty; every write (a put, a delete that deleted something,
 *   a transaction with at least one such change) moves it by exactly one, and every key it
 *   changed carries that revision. Reads and writes answer the revision they saw or made.
 * - A key's `createRevision` is the revision it was created at, `modRevision` its last change,
 *   `version` its puts since creation (1 at creation); a deleted key starts over. An absent key
 *   compares as version, createRevision and modRevision 0, and never equals any value.
 * - A transaction compares (all must hold) and applies `success`, else `failure`, atomically at
 *   one revision; at most {@link MAX_TXN_OPS} operations per branch (etcd's --max-txn-ops).
 * - Leases: granted with a TTL in seconds, kept alive by `keepAliveOnce` (the TTL starts again),
 *   ended by `revokeLease` or by expiry, either deleting every key put under the lease (one
 *   revision). A put under an unknown lease, or a keep-alive of one, throws LeaseNotFoundError;
 *   revoking an unknown lease does nothing.
 * - Watches: of one key or a prefix, from `startRevision` (history included) or from the next
 *   revision; events are delivered asynchronously, in revision order, every event of a revision
 *   in the same call. A start revision older than the store's compaction: the watch is created,
 *   then cancelled by the store (`error` with a WatchCompactedError), as etcd does. A watch that
 *   breaks (etcd away) reports `disconnected`; one the store cancels reports `error`; either
 *   delivers nothing more, and its owner starts a new one.
 */

/** etcd's default `--max-txn-ops`. */
export const MAX_TXN_OPS = 128

/** A key as stored: etcd's mvccpb.KeyValue. */
export interface KeyValue {
  readonly key: string
  readonly value: Buffer
  readonly createRevision: bigint
  readonly modRevision: bigint
  readonly version: bigint
  /** The lease the key is under; "0": none. */
  readonly lease: string
}

export interface RangeResult {
  /** Sorted by key (bytes). */
  readonly kvs: KeyValue[]
  /** The store's revision the range was read at. */
  readonly revision: bigint
}

/** One comparison of a transaction: the key's `target` `op` `value`. */
export type Compare =
  | { readonly key: string; readonly target: 'version' | 'createRevision' | 'modRevision'; readonly op: CompareOp; readonly value: bigint }
  | { readonly key: string; readonly target: 'value'; readonly op: CompareOp; readonly value: Value }

export type CompareOp = '==' | '!=' | '>' | '<'

/** A value to write or compare: bytes, or a string taken as UTF-8. */
export type Value = Buffer | string

/** One write of a transaction. */
export type TxnOp =
  /** `lease` absent: the key is under no lease afterwards; `ignoreLease`: it keeps the one it has. */
  | { readonly type: 'put'; readonly key: string; readonly value: Value; readonly lease?: string; readonly ignoreLease?: boolean }
  | { readonly type: 'delete'; readonly key: string }
  | { readonly type: 'deletePrefix'; readonly prefix: string }

export interface TxnRequest {
  readonly compare: readonly Compare[]
  readonly success: readonly TxnOp[]
  readonly failure?: readonly TxnOp[]
}

export interface TxnResult {
  readonly succeeded: boolean
  /** The revision of the write, or the store's revision when the branch taken changed nothing. */
  readonly revision: bigint
}

export interface WatchEvent {
  readonly type: 'put' | 'delete'
  /** After a put, the key as written; after a delete, its key and the deletion's revision (`modRevision`), an empty value. */
  readonly kv: KeyValue
}

export interface WatchListener {
  /** The events of one or more consecutive revisions, in order. */
  events(events: WatchEvent[]): void
  /** The connection to the store broke; the watch delivers nothing more. */
  disconnected?(error: Error): void
  /** The store cancelled the watch; it delivers nothing more. */
  error?(error: Error): void
}

export interface MetadataWatch {
  /** Stops the watch (again: nothing); no listener call follows. */
  cancel(): Promise<void>
}

export type WatchTarget = { readonly key: string } | { readonly prefix: string }

export interface MetadataStore {
  get(key: string): Promise<KeyValue | null>
  /** Every key starting with `prefix` ("" for all). */
  range(prefix: string): Promise<RangeResult>
  /** Resolves to the write's revision. */
  put(key: string, value: Value, options?: { lease?: string }): Promise<bigint>
  /** Resolves to the deletion's revision (the store's revision when the key was absent). */
  delete(key: string): Promise<bigint>
  txn(request: TxnRequest): Promise<TxnResult>
  /** A new lease of `ttlSeconds`; its id. */
  grantLease(ttlSeconds: number): Promise<string>
  /** Renews the lease; its TTL in seconds. LeaseNotFoundError when it expired or was revoked. */
  keepAliveOnce(leaseId: string): Promise<number>
  revokeLease(leaseId: string): Promise<void>
  watch(target: WatchTarget, options: { startRevision?: bigint }, listener: WatchListener): Promise<MetadataWatch>
  /** Ends the store's connection (what it owns: leases are neither revoked nor kept alive any more). */
  close(): void
}

/** The lease is not known to the store (expired, revoked, or never granted). */
export class LeaseNotFoundError extends Error {
  constructor(leaseId: string, options?: { cause?: unknown }) {
    super(`lease ${leaseId} not found (expired or revoked)`, options)
    this.name = 'LeaseNotFoundError'
  }
}

/** A watch asked for history the store no longer has. */
export class WatchCompactedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'WatchCompactedError'
  }
}

/** Convenience builders of transaction parts. */
export const op = {
  put: (key: string, value: Value, lease?: string): TxnOp => ({ type: 'put', key, value, ...(lease !== undefined ? { lease } : {}) }),
  delete: (key: string): TxnOp => ({ type: 'delete', key }),
  deletePrefix: (prefix: string): TxnOp => ({ type: 'deletePrefix', prefix }),
}

export const compare = {
  version: (key: string, o: CompareOp, value: bigint | number): Compare => ({ key, target: 'version', op: o, value: BigInt(value) }),
  createRevision: (key: string, o: CompareOp, value: bigint | number): Compare => ({ key, target: 'createRevision', op: o, value: BigInt(value) }),
  modRevision: (key: string, o: CompareOp, value: bigint | number): Compare => ({ key, target: 'modRevision', op: o, value: BigInt(value) }),
  value: (key: string, o: CompareOp, value: Value): Compare => ({ key, target: 'value', op: o, value }),
}
