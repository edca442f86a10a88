/**
 * The same cases against a real etcd (helpers/etcd.ts, through EtcdMetadataStore) and the
 * in-memory store: what one answers, the other answers too, for everything the cluster modules
 * use of etcd (ts/cluster/metadata-store.ts): revisions and versions, prefix ranges, transactions
 * with comparisons and both branches, leases (keep-alive, revoke, expiry deleting their keys),
 * prefix and key watches delivering events in revision order, from a past revision, and refusing
 * a compacted one.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EtcdMetadataStore } from '../../ts/cluster/etcd-metadata-store.js'
import { InMemoryMetadataStore } from '../../ts/cluster/in-memory-metadata-store.js'
import { LeaseNotFoundError, MAX_TXN_OPS, WatchCompactedError, compare, op, type MetadataStore, type MetadataWatch, type WatchEvent } from '../../ts/cluster/metadata-store.js'
import { startEtcd, type EtcdServer } from '../helpers/etcd.js'
import { until } from '../helpers/etcd-cluster.js'

type TestStore = MetadataStore & { compact(revision: bigint): Promise<void> }

let etcd: EtcdServer | undefined
let seq = 0

const factories: Array<[string, () => TestStore]> = [
  // Ranges in pages of 5 keys (RANGE_PAGE_KEYS in production): the range cases read several pages.
  ['etcd', () => EtcdMetadataStore.connect({ cluster: etcd!.clusterUrl, clusterId: `conformance${++seq}`, requestTimeoutMs: 5000 }, { rangePageKeys: 5 })],
  ['in-memory', () => new InMemoryMetadataStore()],
]

beforeAll(async () => {
  etcd = await startEtcd()
})

afterAll(async () => {
  await etcd?.close()
})

const v = (s: string) => Buffer.from(s)

/** A watch collecting every event (one array per listener call). */
/** Set around the synchronous part of a write call: a listener called then broke "asynchronously". */
let inWriteCall = false
let deliveredInWriteCall = 0

async function collect(store: MetadataStore, target: { key: string } | { prefix: string }, startRevision?: bigint) {
  const batches: WatchEvent[][] = []
  const events = (events: WatchEvent[]) => {
    if (inWriteCall) deliveredInWriteCall++
    batches.push(events)
  }
  const watch = await store.watch(target, startRevision === undefined ? {} : { startRevision }, { events })
  const flat = () => batches.flat().map((e) => `${e.type} ${e.kv.key}@${e.kv.modRevision}${e.type === 'put' ? `=${e.kv.value.toString()}` : ''}`)
  return { batches, watch, flat }
}

describe.each(factories)('metadata store conformance: %s', (_name, create) => {
  let store: TestStore
  const watches: MetadataWatch[] = []

  function open(): TestStore {
    store = create()
    return store
  }

  afterEach(async () => {
    for (const w of watches.splice(0)) await w.cancel()
    store?.close()
  })

  it('moves one revision per write; versions, create and mod revisions as etcd keeps them', async () => {
    const s = open()
    expect(await s.get('a')).toBeNull()
    const r1 = await s.put('a', v('1'))
    expect(await s.get('a')).toEqual({ key: 'a', value: v('1'), createRevision: r1, modRevision: r1, version: 1n, lease: '0' })
    const r2 = await s.put('a', v('2'))
    expect(r2).toBe(r1 + 1n)
    expect(await s.get('a')).toMatchObject({ createRevision: r1, modRevision: r2, version: 2n })
    const r3 = await s.delete('a')
    expect(r3).toBe(r2 + 1n)
    expect(await s.get('a')).toBeNull()
    // Deleting an absent key changes nothing: the revision stays.
    expect(await s.delete('a')).toBe(r3)
    const r4 = await s.put('a', v('3'))
    expect(r4).toBe(r3 + 1n)
    expect(await s.get('a')).toMatchObject({ createRevision: r4, modRevision: r4, version: 1n })
  })

  it('ranges over a prefix, sorted by key, at the revision read', async () => {
    const s = open()
    await s.put('t/b', v('b'))
    await s.put('t/a', v('a'))
    await s.put('t/a/x', v('ax'))
    const last = await s.put('u', v('u'))
    const res = await s.range('t/')
    expect(res.kvs.map((kv) => kv.key)).toEqual(['t/a', 't/a/x', 't/b'])
    expect(res.revision).toBe(last)
    expect((await s.range('')).kvs.map((kv) => kv.key)).toEqual(['t/a', 't/a/x', 't/b', 'u'])
    expect((await s.range('none/')).kvs).toEqual([])
  })

  it('ranges over more keys than a page: every key once, in order, at the revision of the first page', async () => {
    const s = open()
    let last = 0n
    for (let i = 0; i < 23; i++) last = await s.put(`pg/${String(i).padStart(2, '0')}`, v(String(i)))
    await s.put('pg0', v('after the prefix'))
    const res = await s.range('pg/')
    expect(res.kvs.map((kv) => kv.key)).toEqual(Array.from({ length: 23 }, (_, i) => `pg/${String(i).padStart(2, '0')}`))
    expect(res.kvs.map((kv) => kv.value.toString())).toEqual(Array.from({ length: 23 }, (_, i) => String(i)))
    expect(res.revision).toBe(last + 1n)
  })

  it('transactions: comparisons on absent and present keys, both branches, one revision for every write', async () => {
    const s = open()
    // An absent key: version, create and mod revisions are 0; a value comparison never holds.
    const created = await s.txn({ compare: [compare.createRevision('k', '==', 0), compare.version('k', '==', 0)], success: [op.put('k', v('x')), op.put('other', v('y'))] })
    expect(created.succeeded).toBe(true)
    const k = (await s.get('k'))!
    expect(k.modRevision).toBe(created.revision)
    expect((await s.get('other'))!.modRevision).toBe(created.revision)
    expect((await s.txn({ compare: [compare.value('absent', '!=', v('z'))], success: [op.put('absent', v('1'))] })).succeeded).toBe(false)
    expect(await s.get('absent')).toBeNull()
    // A failed comparison without a failure branch writes nothing: the revision stays.
    const failed = await s.txn({ compare: [compare.createRevision('k', '==', 0)], success: [op.put('k', v('again'))] })
    expect(failed).toEqual({ succeeded: false, revision: created.revision })
    // The failure branch runs when a comparison fails.
    const other = await s.txn({ compare: [compare.modRevision('k', '==', k.modRevision + 100n)], success: [op.put('k', v('no'))], failure: [op.put('k', v('else'))] })
    expect(other).toEqual({ succeeded: false, revision: created.revision + 1n })
    expect((await s.get('k'))!.value).toEqual(v('else'))
    // Every comparison must hold; value, version and revision comparisons with each operator.
    const all = await s.txn({
      compare: [
        compare.value('k', '==', v('else')),
        compare.value('k', '>', v('a')),
        compare.value('k', '<', v('f')),
        compare.version('k', '==', 2),
        compare.version('k', '>', 1),
        compare.createRevision('k', '==', created.revision),
        compare.modRevision('k', '!=', created.revision),
        compare.modRevision('k', '<', other.revision + 1n),
      ],
      success: [op.delete('other')],
    })
    expect(all).toEqual({ succeeded: true, revision: other.revision + 1n })
    expect(await s.get('other')).toBeNull()
    expect((await s.txn({ compare: [compare.version('k', '==', 2), compare.version('k', '>', 2)], success: [op.delete('k')] })).succeeded).toBe(false)
    expect(await s.get('k')).not.toBeNull()
  })

  it('transactions: a prefix deleted in one revision; more than 128 operations refused, nothing written', async () => {
    const s = open()
    await s.txn({ compare: [], success: [op.put('p/1', v('1')), op.put('p/2', v('2')), op.put('q', v('q'))] })
    const res = await s.txn({ compare: [compare.version('q', '==', 1)], success: [op.deletePrefix('p/'), op.put('q', v('q2'))] })
    expect(res.succeeded).toBe(true)
    expect((await s.range('p/')).kvs).toEqual([])
    expect((await s.get('q'))!.modRevision).toBe(res.revision)
    const puts = Array.from({ length: MAX_TXN_OPS + 1 }, (_, i) => op.put(`many/${i}`, v(String(i))))
    await expect(s.txn({ compare: [], success: puts })).rejects.toThrow(/too many operations/)
    expect((await s.range('many/')).kvs).toEqual([])
    expect((await s.txn({ compare: [], success: puts.slice(0, MAX_TXN_OPS) })).succeeded).toBe(true)
    expect((await s.range('many/')).kvs).toHaveLength(MAX_TXN_OPS)
  })

  it('leases: keys under a lease, a put without one leaves it, ignoreLease keeps it; revoke deletes the leased keys in one revision', async () => {
    const s = open()
    const lease = await s.grantLease(10)
    expect(lease).not.toBe('0')
    await s.put('l/a', v('a'), { lease })
    await s.put('l/b', v('b'), { lease })
    await s.put('l/c', v('c'), { lease })
    expect((await s.get('l/a'))!.lease).toBe(lease)
    // A put without a lease takes the key off it; one with ignoreLease keeps the key's lease.
    await s.put('l/c', v('c2'))
    expect((await s.get('l/c'))!.lease).toBe('0')
    await s.txn({ compare: [], success: [{ type: 'put', key: 'l/b', value: v('b2'), ignoreLease: true }] })
    expect((await s.get('l/b'))!).toMatchObject({ lease, value: v('b2') })
    expect(await s.keepAliveOnce(lease)).toBe(10)
    const w = await collect(s, { prefix: 'l/' })
    watches.push(w.watch)
    await s.revokeLease(lease)
    expect((await s.range('l/')).kvs.map((kv) => kv.key)).toEqual(['l/c'])
    await until('the deletions seen', () => w.batches.length > 0)
    expect(w.batches).toHaveLength(1)
    expect(w.batches[0]!.map((e) => `${e.type} ${e.kv.key}`)).toEqual(['delete l/a', 'delete l/b'])
    const revoked = (await s.range('')).revision
    expect(w.batches[0]!.every((e) => e.kv.modRevision === revoked)).toBe(true)
    // The lease is gone: keep-alives and puts under it fail; revoking it again does nothing.
    await expect(s.keepAliveOnce(lease)).rejects.toBeInstanceOf(LeaseNotFoundError)
    await expect(s.put('l/d', v('d'), { lease })).rejects.toBeInstanceOf(LeaseNotFoundError)
    await expect(s.txn({ compare: [], success: [op.put('l/d', v('d'), lease)] })).rejects.toBeInstanceOf(LeaseNotFoundError)
    expect(await s.get('l/d')).toBeNull()
    await s.revokeLease(lease)
  })

  it('leases: one kept alive stays past its TTL; left alone it expires and its keys go', async () => {
    const s = open()
    const kept = await s.grantLease(1)
    const left = await s.grantLease(1)
    await s.put('e/kept', v('k'), { lease: kept })
    await s.put('e/left', v('l'), { lease: left })
    const w = await collect(s, { prefix: 'e/' })
    watches.push(w.watch)
    // Keep-alives every quarter TTL until the other lease's key is gone.
    for (let i = 0; i < 40 && w.batches.length === 0; i++) {
      await s.keepAliveOnce(kept)
      await new Promise((r) => setTimeout(r, 250))
    }
    expect(w.flat().map((e) => e.split('@')[0])).toEqual(['delete e/left'])
    expect(await s.get('e/kept')).not.toBeNull()
    await expect(s.keepAliveOnce(left)).rejects.toBeInstanceOf(LeaseNotFoundError)
    await s.revokeLease(kept)
  })

  it('watches: a prefix in revision order, a transaction in one call, never during the write; a key alone; cancel stops them', async () => {
    const s = open()
    const all = await collect(s, { prefix: 'w/' })
    const one = await collect(s, { key: 'w/a' })
    watches.push(all.watch, one.watch)
    // Delivered asynchronously: never inside the write call. (Whether before or after the write's
    // answer is not defined: etcd sends both on one connection, in either order.)
    deliveredInWriteCall = 0
    inWriteCall = true
    const put1 = s.put('w/a', v('1'))
    inWriteCall = false
    const r1 = await put1
    expect(deliveredInWriteCall).toBe(0)
    const t = await s.txn({ compare: [], success: [op.put('w/b', v('2')), op.put('w/a', v('3')), op.put('x', v('outside'))] })
    const r3 = await s.delete('w/b')
    await until('every event seen', () => all.flat().length === 4 && one.flat().length === 2)
    expect(all.flat()).toEqual([`put w/a@${r1}=1`, `put w/b@${t.revision}=2`, `put w/a@${t.revision}=3`, `delete w/b@${r3}`])
    expect(all.batches.some((b) => b.length === 2 && b.every((e) => e.kv.modRevision === t.revision))).toBe(true)
    expect(one.flat()).toEqual([`put w/a@${r1}=1`, `put w/a@${t.revision}=3`])
    const put = all.batches.flat().find((e) => e.kv.modRevision === t.revision && e.kv.key === 'w/a')!
    expect(put.kv).toMatchObject({ createRevision: r1, version: 2n, lease: '0' })
    await all.watch.cancel()
    await s.put('w/c', v('4'))
    const r5 = await s.put('w/a', v('5'))
    await until('the key watch sees a later write', () => one.flat().length === 3)
    expect(one.flat()[2]).toBe(`put w/a@${r5}=5`)
    expect(all.flat()).toHaveLength(4)
  })

  it('watches: from a past revision, the history first then live; a compacted start revision is refused', async () => {
    const s = open()
    const r1 = await s.put('h/a', v('1'))
    const r2 = await s.put('h/b', v('2'))
    const r3 = await s.delete('h/a')
    const past = await collect(s, { prefix: 'h/' }, r2)
    watches.push(past.watch)
    const r4 = await s.put('h/c', v('3'))
    await until('history and live events', () => past.flat().length === 3)
    expect(past.flat()).toEqual([`put h/b@${r2}=2`, `delete h/a@${r3}`, `put h/c@${r4}=3`])
    await s.compact(r3)
    const after = await collect(s, { prefix: 'h/' }, r4)
    await until('a watch after the compaction', () => after.flat().length === 1)
    expect(after.flat()).toEqual([`put h/c@${r4}=3`])
    await past.watch.cancel()
    await after.watch.cancel()
    watches.splice(0)
    // Before the compaction: as etcd, the watch is made, then cancelled with the reason. (Last:
    // etcd3 1.1.2 attaches no further watch on a connection after such a cancel.)
    const errors: Error[] = []
    const compacted: WatchEvent[] = []
    watches.push(await s.watch({ prefix: 'h/' }, { startRevision: r1 }, { events: (e) => compacted.push(...e), error: (e) => errors.push(e) }))
    await until('the compacted watch cancelled', () => errors.length > 0)
    expect(errors[0]).toBeInstanceOf(WatchCompactedError)
    expect(errors[0]!.message).toMatch(/required revision has been compacted/)
    expect(compacted).toEqual([])
  })
})
