/**
 * The data-path codecs, hand-written (the ones served before issue 25, kept in bench/hand-written
 * as the baseline) next to generated (what ts/protocol/apis serves now: `fetchCodec` and
 * `produceCodec`, generated codecs behind `servedCodec`), in one run: what a broker does per
 * Produce and Fetch (decode the request, encode the response; Fetch's response with its records
 * left out as file ranges for sendfile) and what a client does (encode the request, decode the
 * response). Same messages on both sides; records are views (never copied into objects) on both.
 * Ratios are what to read: generated / hand-written time.
 *
 *   node scripts/build.mjs ts && node dist/bench/protocol-codecs.bench.js
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import {
  fetchCodec as oldFetchCodec,
  encodeFetchResponseCuts as oldEncodeFetchResponseCuts,
  type FetchRequest as OldFetchRequest,
  type FetchResponse as OldFetchResponse,
  type ResponseRecords as OldResponseRecords,
} from './hand-written/fetch.js'
import { produceCodec as oldProduceCodec, type ProduceRequest as OldProduceRequest, type ProduceResponse as OldProduceResponse } from './hand-written/produce.js'
import { encodeFetchResponseCuts, fetchCodec, type RecordsRef, type ResponseRecords } from '../ts/protocol/apis/fetch.js'
import { produceCodec } from '../ts/protocol/apis/produce.js'
import { defaultFetchRequest, defaultFetchPartition, type FetchRequest } from '../ts/protocol/messages/fetch-request.js'
import { defaultFetchResponse, defaultPartitionData, type FetchResponse } from '../ts/protocol/messages/fetch-response.js'
import type { ProduceRequest } from '../ts/protocol/messages/produce-request.js'
import { defaultPartitionProduceResponse, type ProduceResponse } from '../ts/protocol/messages/produce-response.js'
import { Reader } from '../ts/protocol/reader.js'
import { Writer } from '../ts/protocol/writer.js'

const BENCH_MS = Number(process.env.BENCH_MS ?? 1000)
const PRODUCE_VERSION = 9
const FETCH_VERSION = 12
const PARTITIONS = 32
const RECORDS = Buffer.alloc(16 * 1024, 7)

// ---------------------------------------------------------------------------------------------
// The messages, in each codec's shape

const produceOld: OldProduceRequest = {
  transactionalId: null,
  acks: -1,
  timeoutMs: 30_000,
  topicData: [{ name: 'bench', partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: RECORDS })) }],
}
const produceNew: ProduceRequest = {
  transactionalId: null,
  acks: -1,
  timeoutMs: 30_000,
  topicData: [{ name: 'bench', topicId: Buffer.alloc(16), partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: RECORDS })) }],
}
const produceResponseOld: OldProduceResponse = {
  responses: [
    {
      name: 'bench',
      partitionResponses: Array.from({ length: PARTITIONS }, (_, index) => ({
        index,
        errorCode: 0,
        baseOffset: 1000n,
        logAppendTimeMs: -1n,
        logStartOffset: 0n,
        recordErrors: [],
        errorMessage: null,
      })),
    },
  ],
  throttleTimeMs: 0,
}
const produceResponseNew: ProduceResponse = {
  responses: [
    {
      name: 'bench',
      topicId: Buffer.alloc(16),
      partitionResponses: Array.from({ length: PARTITIONS }, (_, index) => ({ ...defaultPartitionProduceResponse(), index, baseOffset: 1000n, logStartOffset: 0n })),
    },
  ],
  throttleTimeMs: 0,
  nodeEndpoints: [],
}

const fetchOld: OldFetchRequest = {
  replicaId: -1,
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 52_428_800,
  isolationLevel: 1,
  sessionId: 0,
  sessionEpoch: -1,
  topics: [
    {
      topic: 'bench',
      topicId: Buffer.alloc(16),
      partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({
        partition,
        currentLeaderEpoch: 0,
        fetchOffset: 1000n,
        lastFetchedEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: 1_048_576,
      })),
    },
  ],
  forgottenTopicsData: [],
  rackId: '',
}
const fetchNew: FetchRequest = {
  ...defaultFetchRequest(),
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 52_428_800,
  isolationLevel: 1,
  topics: [
    {
      topic: 'bench',
      topicId: Buffer.alloc(16),
      partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ ...defaultFetchPartition(), partition, currentLeaderEpoch: 0, fetchOffset: 1000n, partitionMaxBytes: 1_048_576 })),
    },
  ],
}

/** A file range, as the broker's FileRecords: written by sendfile, never copied. */
const fileRange: RecordsRef = { sizeInBytes: RECORDS.length }

const partitionOld = (partitionIndex: number, records: OldResponseRecords) => ({
  partitionIndex,
  errorCode: 0,
  highWatermark: 5000n,
  lastStableOffset: 5000n,
  logStartOffset: 0n,
  abortedTransactions: null,
  preferredReadReplica: -1,
  records,
})
const fetchResponseOld = (records: (i: number) => OldResponseRecords): OldFetchResponse<OldResponseRecords> => ({
  throttleTimeMs: 0,
  errorCode: 0,
  sessionId: 0,
  responses: [{ topic: 'bench', topicId: Buffer.alloc(16), partitions: Array.from({ length: PARTITIONS }, (_, i) => partitionOld(i, records(i))) }],
})
const fetchResponseNew = (records: (i: number) => ResponseRecords): FetchResponse<ResponseRecords> => ({
  ...defaultFetchResponse<ResponseRecords>(),
  responses: [
    {
      topic: 'bench',
      topicId: Buffer.alloc(16),
      partitions: Array.from({ length: PARTITIONS }, (_, i) => ({
        ...defaultPartitionData<ResponseRecords>(),
        partitionIndex: i,
        highWatermark: 5000n,
        lastStableOffset: 5000n,
        logStartOffset: 0n,
        abortedTransactions: null,
        records: records(i),
      })),
    },
  ],
})

function bytesOf(write: (w: Writer) => void): Buffer {
  const w = new Writer(1024)
  write(w)
  return Buffer.from(w.finish())
}

// ---------------------------------------------------------------------------------------------

interface Pair {
  case: string
  old: () => unknown
  generated: () => unknown
}

const produceBytes = bytesOf((w) => oldProduceCodec.encodeRequest(w, PRODUCE_VERSION, produceOld))
const produceResponseBytes = bytesOf((w) => oldProduceCodec.encodeResponse(w, PRODUCE_VERSION, produceResponseOld))
const fetchBytes = bytesOf((w) => oldFetchCodec.encodeRequest(w, FETCH_VERSION, fetchOld))
const fetchResponseBytes = bytesOf((w) => oldFetchCodec.encodeResponse(w, FETCH_VERSION, fetchResponseOld(() => RECORDS) as OldFetchResponse))

// Same bytes both ways, or the comparison means nothing.
const same = (a: Buffer, b: Buffer, what: string) => {
  if (!a.equals(b)) throw new Error(`${what}: the two codecs write different bytes`)
}
same(
  produceBytes,
  bytesOf((w) => produceCodec.encodeRequest(w, PRODUCE_VERSION, produceNew)),
  'Produce request',
)
same(
  produceResponseBytes,
  bytesOf((w) => produceCodec.encodeResponse(w, PRODUCE_VERSION, produceResponseNew)),
  'Produce response',
)
same(
  fetchBytes,
  bytesOf((w) => fetchCodec.encodeRequest(w, FETCH_VERSION, fetchNew)),
  'Fetch request',
)
same(
  fetchResponseBytes,
  bytesOf((w) => fetchCodec.encodeResponse(w, FETCH_VERSION, fetchResponseNew(() => RECORDS) as FetchResponse)),
  'Fetch response',
)

const oldFileResponse = fetchResponseOld(() => fileRange)
const newFileResponse = fetchResponseNew(() => fileRange)
// The file ranges are cut out at the same places by both.
const cutsAt = (cuts: { at: number; size: number }[]) => JSON.stringify(cuts.map((c) => [c.at, c.size]))
if (cutsAt(oldEncodeFetchResponseCuts(new Writer(1024), FETCH_VERSION, oldFileResponse)) !== cutsAt(encodeFetchResponseCuts(new Writer(1024), FETCH_VERSION, newFileResponse))) {
  throw new Error('Fetch response cuts: the two codecs cut the records at different places')
}

const pairs: Pair[] = [
  {
    case: 'broker: decode Produce v9 request (32 partitions x 16 KiB)',
    old: () => oldProduceCodec.decodeRequest(new Reader(produceBytes), PRODUCE_VERSION),
    generated: () => produceCodec.decodeRequest(new Reader(produceBytes), PRODUCE_VERSION),
  },
  {
    case: 'broker: encode Produce v9 response (32 partitions)',
    old: () => oldProduceCodec.encodeResponse(new Writer(1024), PRODUCE_VERSION, produceResponseOld),
    generated: () => produceCodec.encodeResponse(new Writer(1024), PRODUCE_VERSION, produceResponseNew),
  },
  {
    case: 'broker: decode Fetch v12 request (32 partitions)',
    old: () => oldFetchCodec.decodeRequest(new Reader(fetchBytes), FETCH_VERSION),
    generated: () => fetchCodec.decodeRequest(new Reader(fetchBytes), FETCH_VERSION),
  },
  {
    case: 'broker: encode Fetch v12 response, records as file ranges (32 cuts)',
    old: () => oldEncodeFetchResponseCuts(new Writer(1024), FETCH_VERSION, oldFileResponse),
    generated: () => encodeFetchResponseCuts(new Writer(1024), FETCH_VERSION, newFileResponse),
  },
  {
    case: 'client: encode Produce v9 request (32 partitions x 16 KiB)',
    old: () => oldProduceCodec.encodeRequest(new Writer(1024), PRODUCE_VERSION, produceOld),
    generated: () => produceCodec.encodeRequest(new Writer(1024), PRODUCE_VERSION, produceNew),
  },
  {
    case: 'client: decode Produce v9 response',
    old: () => oldProduceCodec.decodeResponse(new Reader(produceResponseBytes), PRODUCE_VERSION),
    generated: () => produceCodec.decodeResponse(new Reader(produceResponseBytes), PRODUCE_VERSION),
  },
  {
    case: 'client: encode Fetch v12 request',
    old: () => oldFetchCodec.encodeRequest(new Writer(1024), FETCH_VERSION, fetchOld),
    generated: () => fetchCodec.encodeRequest(new Writer(1024), FETCH_VERSION, fetchNew),
  },
  {
    case: 'client: decode Fetch v12 response (32 x 16 KiB records, views)',
    old: () => oldFetchCodec.decodeResponse(new Reader(fetchResponseBytes), FETCH_VERSION),
    generated: () => fetchCodec.decodeResponse(new Reader(fetchResponseBytes), FETCH_VERSION),
  },
]

async function main(): Promise<void> {
  const { Bench } = await import('tinybench')
  const machine = `${cpus()[0]?.model ?? 'cpu'} x${cpus().length}, Node ${process.version}`
  console.log(`protocol codecs, hand-written next to generated (${machine}), ${BENCH_MS} ms per case\n`)
  const rows: Array<{ case: string; oldOpsPerSec: number; generatedOpsPerSec: number; timeRatio: number }> = []
  for (const p of pairs) {
    // Interleaved rounds, so that load on the shared machine falls on both alike.
    const bench = new Bench({ time: BENCH_MS / 2, warmup: true })
    bench.add('hand-written', p.old).add('generated', p.generated).add('hand-written ', p.old).add('generated ', p.generated)
    await bench.run()
    const hz = (name: string) => bench.tasks.filter((t) => t.name.trim() === name).map((t) => t.result as { throughput?: { mean: number }; hz?: number })
    const mean = (name: string) => {
      const rs = hz(name).map((r) => r.throughput?.mean ?? r.hz ?? 0)
      return rs.reduce((a, b) => a + b, 0) / rs.length
    }
    const o = mean('hand-written')
    const g = mean('generated')
    rows.push({ case: p.case, oldOpsPerSec: Math.round(o), generatedOpsPerSec: Math.round(g), timeRatio: Number((o / g).toFixed(2)) })
  }
  console.log('| case | hand-written ops/s | generated ops/s | generated time / hand-written time |')
  console.log('|---|---:|---:|---:|')
  for (const r of rows) console.log(`| ${r.case} | ${r.oldOpsPerSec.toLocaleString('en')} | ${r.generatedOpsPerSec.toLocaleString('en')} | ${r.timeRatio} |`)
  const outDir = join(process.cwd(), 'bench', '.out')
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'protocol-codecs.json'), JSON.stringify({ machine, benchMs: BENCH_MS, rows }, null, 2))
}

void main()
