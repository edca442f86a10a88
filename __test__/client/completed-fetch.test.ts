/**
 * CompletedFetch over the batches a real Apache Kafka 4.4 broker wrote (__test__/fixtures/kafka:
 * every codec, headers, idempotent and transactional batches, a committed and an aborted
 * transaction with their markers), decoded both by the Rust decoder through the binding
 * (crates/record/src/fetch_index.rs) and by the TypeScript twin: the same records as Kafka's
 * DumpLogSegments lists; READ_COMMITTED with the aborted transactions of Kafka's .txnindex drops
 * exactly the aborted records; read in small steps the same; a response cut mid-batch stops
 * before it; a corrupt batch is CORRUPT_MESSAGE after the records before it. The end offset the
 * batch headers tell on arrival (what the Fetcher prefetches from) is where reading ends. With
 * the string deserializers, keys and values are the same records' UTF-8 strings.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CompletedFetch, type DeserializedRecord } from '../../ts/client/completed-fetch.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { nativeRecordIndexer, type Deserializers, type RecordIndexer } from '../../ts/client/fetched-records.js'
import type { AbortedTransaction } from '../../ts/protocol/apis/fetch.js'

const DIR = join(__dirname, '../fixtures/kafka/fixture-0')
const expected = JSON.parse(readFileSync(join(__dirname, '../fixtures/kafka/expected.json'), 'utf8')) as {
  records: Array<{
    offset: number
    timestamp: number
    key: string | null
    value: string | null
    headers: Array<{ key: string; value: string | null }>
    control: string | null
    transaction: string | null
  }>
}
const logs = Buffer.concat(
  readdirSync(DIR)
    .filter((f) => f.endsWith('.log'))
    .sort()
    .map((f) => readFileSync(join(DIR, f))),
)

/** Kafka's .txnindex entries (AbortedTxn: version int16, producerId, firstOffset, lastOffset, lastStableOffset). */
function abortedTransactions(): AbortedTransaction[] {
  const out: AbortedTransaction[] = []
  for (const f of readdirSync(DIR).filter((f) => f.endsWith('.txnindex'))) {
    const b = readFileSync(join(DIR, f))
    for (let at = 0; at + 34 <= b.length; at += 34) out.push({ producerId: b.readBigInt64BE(at + 2), firstOffset: b.readBigInt64BE(at + 10) })
  }
  return out
}

const native = nativeRecordIndexer()
const decoders: Array<[string, RecordIndexer | null]> = [['typescript', null]]
if (process.env.FERROLOG_NATIVE !== '0') decoders.push(['rust (binding)', native])

function fetch(records: Buffer, indexer: RecordIndexer | null, readCommitted: boolean, from = 0n, deserializers?: Deserializers) {
  return new CompletedFetch(
    'fixture',
    0,
    from,
    0,
    {
      partitionIndex: 0,
      errorCode: 0,
      highWatermark: 274n,
      lastStableOffset: 274n,
      logStartOffset: 0n,
      abortedTransactions: readCommitted ? abortedTransactions() : null,
      preferredReadReplica: -1,
      records,
    },
    readCommitted,
    0,
    indexer,
    undefined,
    deserializers,
  )
}

function readAll(c: CompletedFetch, step: number): DeserializedRecord[] {
  const out: DeserializedRecord[] = []
  for (let i = 0; i < 1000 && !c.isConsumed; i++) out.push(...c.fetchRecords(step))
  return out
}

const plain = (r: DeserializedRecord) => ({
  offset: Number(r.offset),
  timestamp: Number(r.timestamp),
  key: r.key?.toString() ?? null,
  value: r.value?.toString() ?? null,
  headers: r.headers.map((h) => ({ key: h.key, value: h.value?.toString() ?? null })),
})
const want = (pred: (r: (typeof expected.records)[number]) => boolean) =>
  expected.records.filter((r) => r.control === null && pred(r)).map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers }))

describe('CompletedFetch over batches Kafka wrote', () => {
  it('the binding has the Rust decoder', () => {
    if (process.env.FERROLOG_NATIVE !== '0') expect(native).not.toBeNull()
  })

  for (const [name, indexer] of decoders) {
    describe(name, () => {
      it('READ_UNCOMMITTED: every data record as DumpLogSegments lists it (no control records)', () => {
        const c = fetch(logs, indexer, false)
        expect(c.endOffset).toBe(274n)
        const got = readAll(c, 1000)
        expect(got.map(plain)).toEqual(want(() => true))
        expect(c.nextFetchOffset).toBe(274n)
      })

      it('READ_COMMITTED: the aborted transaction dropped by the .txnindex entries', () => {
        expect(abortedTransactions().length).toBeGreaterThan(0)
        const c = fetch(logs, indexer, true)
        const got = readAll(c, 1000)
        expect(got.map(plain)).toEqual(want((r) => r.transaction !== 'aborted'))
        expect(got.length).toBe(269)
        expect(c.nextFetchOffset).toBe(c.endOffset)
      })

      it('string deserializers: the same records with keys and values as strings (null kept), in steps and from inside a batch', () => {
        const strings = { key: 'string', value: 'string' } as const
        for (const [from, step] of [
          [0n, 1000],
          [100n, 7],
        ] as const) {
          const got = readAll(fetch(logs, indexer, false, from, strings), step)
          for (const r of got) {
            expect(r.key === null || typeof r.key === 'string').toBe(true)
            expect(r.value === null || typeof r.value === 'string').toBe(true)
          }
          expect(got.map(plain)).toEqual(want((r) => r.offset >= Number(from)))
        }
        expect(readAll(fetch(logs, indexer, false, 0n, { key: 'buffer', value: 'string' }), 1000).every((r) => r.key === null || Buffer.isBuffer(r.key))).toBe(true)
      })

      it('read 7 at a time, and from an offset inside a batch: the same records', () => {
        expect(readAll(fetch(logs, indexer, true), 7).map(plain)).toEqual(want((r) => r.transaction !== 'aborted'))
        expect(readAll(fetch(logs, indexer, false, 100n), 7).map(plain)).toEqual(want((r) => r.offset >= 100))
      })

      it('a response cut in the middle of a batch stops before it', () => {
        const c = fetch(logs.subarray(0, 3000), indexer, false)
        const got = readAll(c, 1000)
        const lastWhole = got.at(-1)!.offset
        expect(got.map(plain)).toEqual(want((r) => r.offset <= Number(lastWhole)))
        expect(c.nextFetchOffset).toBe(lastWhole + 1n)
        expect(c.endOffset).toBe(lastWhole + 1n)
        // Not even one whole batch: no end known.
        expect(fetch(logs.subarray(0, 40), indexer, false).endOffset).toBeNull()
      })

      it('a corrupt batch: CORRUPT_MESSAGE once the records before it are read', () => {
        const bad = Buffer.from(logs)
        bad[5000] ^= 0xff
        const c = fetch(bad, indexer, false)
        const before = c.fetchRecords(1000)
        expect(before.length).toBeGreaterThan(0)
        let err: unknown
        try {
          for (let i = 0; i < 10; i++) c.fetchRecords(1000)
        } catch (e) {
          err = e
        }
        expect(err).toBeInstanceOf(KafkaClientError)
        expect((err as KafkaClientError).code).toBe('CORRUPT_MESSAGE')
      })
    })
  }
})
