/**
 * The data-path codecs, hand-written (the ones served before issue 25, kept in bench/hand-written
 * as the baseline) next to generated (what ts/protocol/apis serves now: `fetchCodec`,
 * `produceCodec`, `listOffsetsCodec` and `metadataCodec`, generated codecs behind `servedCodec`),
 * in one run: what a broker does per Produce and Fetch (decode the request, encode the response;
 * Fetch's response with its records left out as file ranges for sendfile), per ListOffsets (a
 * consumer's reset) and per Metadata (every client's refresh), and what a client does (encode the
 * request, decode the response). Same messages on both sides; records are views (never copied into objects) on both.
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
import { listOffsetsCodec as oldListOffsetsCodec, type ListOffsetsRequest as OldListOffsetsRequest, type ListOffsetsResponse as OldListOffsetsResponse } from './hand-written/list-offsets.js'
import { metadataCodec as oldMetadataCodec, type MetadataRequest as OldMetadataRequest, type MetadataResponse as OldMetadataResponse } from './hand-written/metadata.js'
import { produceCodec as oldProduceCodec, type ProduceRequest as OldProduceRequest, type ProduceResponse as OldProduceResponse } from './hand-written/produce.js'
import { encodeFetchResponseCuts, fetchCodec, type RecordsRef, type ResponseRecords } from '../ts/protocol/apis/fetch.js'
import { listOffsetsCodec, type ListOffsetsRequest, type ListOffsetsResponse } from '../ts/protocol/apis/list-offsets.js'
import { AUTHORIZED_OPERATIONS_OMITTED, metadataCodec, type MetadataRequest, type MetadataResponse } from '../ts/protocol/apis/metadata.js'
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
const LIST_OFFSETS_VERSION = 9
const METADATA_VERSION = 12
/** Topics of a Metadata exchange, each of METADATA_PARTITIONS partitions on 3 brokers. */
const METADATA_TOPICS = 50
const METADATA_PARTITIONS = 8
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

const listOffsetsOld: OldListOffsetsRequest = {
  replicaId: -1,
  isolationLevel: 1,
  topics: [{ name: 'bench', partitions: Array.from({ length: PARTITIONS }, (_, partitionIndex) => ({ partitionIndex, currentLeaderEpoch: 0, timestamp: -2n, maxNumOffsets: 1 })) }],
}
const listOffsetsNew: ListOffsetsRequest = {
  replicaId: -1,
  isolationLevel: 1,
  topics: [{ name: 'bench', partitions: Array.from({ length: PARTITIONS }, (_, partitionIndex) => ({ partitionIndex, currentLeaderEpoch: 0, timestamp: -2n })) }],
  timeoutMs: 0,
}
const listOffsetsResponseOld: OldListOffsetsResponse = {
  throttleTimeMs: 0,
  topics: [
    { name: 'bench', partitions: Array.from({ length: PARTITIONS }, (_, partitionIndex) => ({ partitionIndex, errorCode: 0, oldStyleOffsets: [], timestamp: -1n, offset: 1000n, leaderEpoch: 0 })) },
  ],
}
const listOffsetsResponseNew: ListOffsetsResponse = {
  throttleTimeMs: 0,
  topics: [{ name: 'bench', partitions: Array.from({ length: PARTITIONS }, (_, partitionIndex) => ({ partitionIndex, errorCode: 0, timestamp: -1n, offset: 1000n, leaderEpoch: 0 })) }],
}

const topicNames = Array.from({ length: METADATA_TOPICS }, (_, i) => `bench-topic-${i}`)
const metadataOld: OldMetadataRequest = {
  topics: topicNames.map((name) => ({ topicId: Buffer.alloc(16), name })),
  allowAutoTopicCreation: false,
  includeClusterAuthorizedOperations: false,
  includeTopicAuthorizedOperations: false,
}
const metadataNew: MetadataRequest = { ...metadataOld }
const metadataTopic = (name: string, i: number) => ({
  errorCode: 0,
  name,
  topicId: Buffer.alloc(16, i + 1),
  isInternal: false,
  partitions: Array.from({ length: METADATA_PARTITIONS }, (_, p) => ({
    errorCode: 0,
    partitionIndex: p,
    leaderId: p % 3,
    leaderEpoch: 4,
    replicaNodes: [p % 3, (p + 1) % 3, (p + 2) % 3],
    isrNodes: [p % 3, (p + 1) % 3, (p + 2) % 3],
    offlineReplicas: [],
  })),
  topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
})
const metadataResponseOld: OldMetadataResponse = {
  throttleTimeMs: 0,
  brokers: [0, 1, 2].map((nodeId) => ({ nodeId, host: `broker-${nodeId}.bench.local`, port: 9092, rack: null })),
  clusterId: 'ZmVycm9sb2ctYmVuY2g',
  controllerId: 0,
  topics: topicNames.map(metadataTopic),
  clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
}
const metadataResponseNew: MetadataResponse = { ...metadataResponseOld, errorCode: 0 }

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

const listOffsetsBytes = bytesOf((w) => oldListOffsetsCodec.encodeRequest(w, LIST_OFFSETS_VERSION, listOffsetsOld))
const listOffsetsResponseBytes = bytesOf((w) => oldListOffsetsCodec.encodeResponse(w, LIST_OFFSETS_VERSION, listOffsetsResponseOld))
const metadataBytes = bytesOf((w) => oldMetadataCodec.encodeRequest(w, METADATA_VERSION, metadataOld))
const metadataResponseBytes = bytesOf((w) => oldMetadataCodec.encodeResponse(w, METADATA_VERSION, metadataResponseOld))

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

same(
  listOffsetsBytes,
  bytesOf((w) => listOffsetsCodec.encodeRequest(w, LIST_OFFSETS_VERSION, listOffsetsNew)),
  'ListOffsets request',
)
same(
  listOffsetsResponseBytes,
  bytesOf((w) => listOffsetsCodec.encodeResponse(w, LIST_OFFSETS_VERSION, listOffsetsResponseNew)),
  'ListOffsets response',
)
same(
  metadataBytes,
  bytesOf((w) => metadataCodec.encodeRequest(w, METADATA_VERSION, metadataNew)),
  'Metadata request',
)
same(
  metadataResponseBytes,
  bytesOf((w) => metadataCodec.encodeResponse(w, METADATA_VERSION, metadataResponseNew)),
  'Metadata response',
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
    case: 'broker: decode ListOffsets v9 request (32 partitions)',
    old: () => oldListOffsetsCodec.decodeRequest(new Reader(listOffsetsBytes), LIST_OFFSETS_VERSION),
    generated: () => listOffsetsCodec.decodeRequest(new Reader(listOffsetsBytes), LIST_OFFSETS_VERSION),
  },
  {
    case: 'broker: encode ListOffsets v9 response (32 partitions)',
    old: () => oldListOffsetsCodec.encodeResponse(new Writer(1024), LIST_OFFSETS_VERSION, listOffsetsResponseOld),
    generated: () => listOffsetsCodec.encodeResponse(new Writer(1024), LIST_OFFSETS_VERSION, listOffsetsResponseNew),
  },
  {
    case: 'broker: decode Metadata v12 request (50 topics)',
    old: () => oldMetadataCodec.decodeRequest(new Reader(metadataBytes), METADATA_VERSION),
    generated: () => metadataCodec.decodeRequest(new Reader(metadataBytes), METADATA_VERSION),
  },
  {
    case: 'broker: encode Metadata v12 response (3 brokers, 50 topics x 8 partitions)',
    old: () => oldMetadataCodec.encodeResponse(new Writer(1024), METADATA_VERSION, metadataResponseOld),
    generated: () => metadataCodec.encodeResponse(new Writer(1024), METADATA_VERSION, metadataResponseNew),
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
  {
    case: 'client: encode ListOffsets v9 request (32 partitions)',
    old: () => oldListOffsetsCodec.encodeRequest(new Writer(1024), LIST_OFFSETS_VERSION, listOffsetsOld),
    generated: () => listOffsetsCodec.encodeRequest(new Writer(1024), LIST_OFFSETS_VERSION, listOffsetsNew),
  },
  {
    case: 'client: decode ListOffsets v9 response',
    old: () => oldListOffsetsCodec.decodeResponse(new Reader(listOffsetsResponseBytes), LIST_OFFSETS_VERSION),
    generated: () => listOffsetsCodec.decodeResponse(new Reader(listOffsetsResponseBytes), LIST_OFFSETS_VERSION),
  },
  {
    case: 'client: encode Metadata v12 request (50 topics)',
    old: () => oldMetadataCodec.encodeRequest(new Writer(1024), METADATA_VERSION, metadataOld),
    generated: () => metadataCodec.encodeRequest(new Writer(1024), METADATA_VERSION, metadataNew),
  },
  {
    case: 'client: decode Metadata v12 response (3 brokers, 50 topics x 8 partitions)',
    old: () => oldMetadataCodec.decodeResponse(new Reader(metadataResponseBytes), METADATA_VERSION),
    generated: () => metadataCodec.decodeResponse(new Reader(metadataResponseBytes), METADATA_VERSION),
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
