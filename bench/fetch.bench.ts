/**
 * Fetch path benchmarks, through a real broker on 127.0.0.1 and real sockets (our KafkaConnection):
 *
 * 1. Produce-to-fetch latency through the fetch purgatory: one consumer connection keeps one
 *    Fetch parked (maxWaitMs 30000, minBytes 1) on a partition, a producer connection sends one
 *    small batch (acks=1); the time from writing the produce to decoding the fetch response.
 * 2. 2,000 parked fetches on 1,000 partitions from 2,000 connections (one each: a connection's
 *    requests are handled one at a time, as in Kafka, so a parked Fetch holds its connection;
 *    one partition each, maxWaitMs 60000): the heap they hold, the CPU burnt while they sit idle
 *    for 5 s, and the time for produces to all 1,000 partitions to complete them all.
 *
 * The broker runs in this process, so the heap figure includes the clients' side (a pending
 * request each); that share is measured on its own (the same requests sent to a socket that never
 * answers) and subtracted to give the broker's. Results go to stdout as a table and to
 * bench/.out/fetch.json.
 *
 *   node scripts/build.mjs ts && node --expose-gc dist/bench/fetch.bench.js
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { KafkaConnection } from '../ts/client/connection.js'
import { parseHostPort } from '../ts/client/network-client.js'

type KafkaClient = KafkaConnection

/** A raw connection (no ApiVersions), every request written at once: the load is the benchmark's. */
function connectTo(bootstrap: string, options: { clientId: string }): Promise<KafkaConnection> {
  const { host, port } = parseHostPort(bootstrap)
  return KafkaConnection.open(host, port, { ...options, maxInFlight: Number.MAX_SAFE_INTEGER })
}
import { ZERO_UUID } from '../ts/protocol/apis/common.js'
import { fetchCodec, type FetchResponse } from '../ts/protocol/apis/fetch.js'
import { produceCodec, type ProduceResponse } from '../ts/protocol/apis/produce.js'
import { defaultFetchPartition, defaultFetchRequest } from '../ts/protocol/messages/fetch-request.js'
import { buildBatch } from '../ts/protocol/batch-builder.js'
import { Broker } from '../ts/server/broker.js'
import { brokerConfigFrom, defaultTransferMode } from '../ts/server/config.js'
import { silentLogger } from '../ts/logger.js'

const FETCH_VERSION = 12
const PRODUCE_VERSION = 9
const ROUND_TRIPS = Number(process.env.FETCH_ROUND_TRIPS ?? 3000)
const ROUND_TRIPS_MS = 30_000 // bound on the latency loop, whatever ROUND_TRIPS says
const CONNECTIONS = 2_000
const FETCHES_PER_CONNECTION = 1
const PARTITIONS = 1_000
const IDLE_MS = 5_000
/** FETCH_TRANSFER=zero-copy|copy: how the broker sends Fetch records (default: the broker's default). */
const TRANSFER_MODE = process.env.FETCH_TRANSFER ?? defaultTransferMode()

interface Row {
  case: string
  value: number
  unit: string
  target: string
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc
  if (!collect) throw new Error('run with node --expose-gc')
  collect()
  collect()
}

function heapAfterGc(): number {
  gc()
  return process.memoryUsage().heapUsed
}

/** Resolves once `condition` holds, checking on every turn of the event loop; fails after `timeoutMs`. */
async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

function fetchOne(client: KafkaClient, topic: string, partition: number, fetchOffset: bigint, maxWaitMs: number): Promise<FetchResponse> {
  return client.send(
    fetchCodec,
    FETCH_VERSION,
    {
      ...defaultFetchRequest(),
      maxWaitMs,
      minBytes: 1,
      maxBytes: 1024 * 1024,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic,
          topicId: ZERO_UUID,
          partitions: [{ ...defaultFetchPartition(), partition, fetchOffset, partitionMaxBytes: 1024 * 1024 }],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    },
    // The long poll is the point: the request may wait its maxWaitMs and more.
    { timeoutMs: maxWaitMs + 30_000 },
  )
}

function produceOne(client: KafkaClient, topic: string, partition: number, records: Buffer): Promise<ProduceResponse> {
  return client.send(produceCodec, PRODUCE_VERSION, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: topic, topicId: ZERO_UUID, partitionData: [{ index: partition, records }] }],
  })
}

function expectRecords(res: FetchResponse, what: string): void {
  const p = res.responses[0]?.partitions[0]
  if (!p || p.errorCode !== 0 || !p.records || p.records.length === 0) throw new Error(`${what}: fetch answered without records: ${JSON.stringify(p?.errorCode)}`)
}

function expectProduced(res: ProduceResponse): void {
  const code = res.responses[0]?.partitionResponses[0]?.errorCode
  if (code !== 0) throw new Error(`produce failed with error code ${code}`)
}

function percentile(sorted: number[], p: number): number {
  const value = sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
  if (value === undefined) throw new Error('percentile of no samples')
  return value
}

async function latency(broker: Broker, bootstrap: string, rows: Row[]): Promise<Record<string, number>> {
  const topic = 'fetch-latency'
  await broker.createTopic(topic, 1, {})
  const consumer = await connectTo(bootstrap, { clientId: 'bench-consumer' })
  const producer = await connectTo(bootstrap, { clientId: 'bench-producer' })
  const parked = () => broker.replicaManager.delayedFetchStats().parked
  const batch = buildBatch([{ value: Buffer.alloc(100, 1) }])
  const samples: number[] = []
  const stopAt = Date.now() + ROUND_TRIPS_MS
  try {
    for (let i = 0; i < ROUND_TRIPS && Date.now() < stopAt; i++) {
      const fetch = fetchOne(consumer, topic, 0, BigInt(i), 30_000)
      await until(() => parked() === 1, 'the fetch to park')
      const start = process.hrtime.bigint()
      const produced = produceOne(producer, topic, 0, batch)
      const res = await fetch
      samples.push(Number(process.hrtime.bigint() - start) / 1e6)
      expectRecords(res, `round trip ${i}`)
      expectProduced(await produced)
    }
  } finally {
    await consumer.close()
    await producer.close()
  }
  const sorted = [...samples].sort((a, b) => a - b)
  const result = {
    roundTrips: samples.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: percentile(sorted, 100),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  }
  const label = `produce -> parked fetch answered, ${result.roundTrips} round trips`
  rows.push({ case: `${label}: p50`, value: result.p50, unit: 'ms', target: '' })
  rows.push({ case: `${label}: p99`, value: result.p99, unit: 'ms', target: '< 5 ms (idle machine)' })
  rows.push({ case: `${label}: p99.9`, value: result.p999, unit: 'ms', target: '' })
  rows.push({ case: `${label}: max`, value: result.max, unit: 'ms', target: '' })
  return result
}

async function manyParked(broker: Broker, bootstrap: string, rows: Row[]): Promise<Record<string, number>> {
  const topic = 'fetch-parked'
  await broker.createTopic(topic, PARTITIONS, {})
  const total = CONNECTIONS * FETCHES_PER_CONNECTION
  const stats = () => broker.replicaManager.delayedFetchStats()
  const consumers: KafkaClient[] = []
  const producers: KafkaClient[] = []
  try {
    for (let c = 0; c < CONNECTIONS; c++) consumers.push(await connectTo(bootstrap, { clientId: `bench-consumer-${c}` }))
    for (let c = 0; c < 10; c++) producers.push(await connectTo(bootstrap, { clientId: `bench-producer-${c}` }))
    const completedBefore = stats().completed
    const heapBefore = heapAfterGc()

    const parkStart = process.hrtime.bigint()
    const fetches: Promise<FetchResponse>[] = []
    for (let c = 0; c < CONNECTIONS; c++) {
      for (let j = 0; j < FETCHES_PER_CONNECTION; j++) fetches.push(fetchOne(consumers[c]!, topic, (c * FETCHES_PER_CONNECTION + j) % PARTITIONS, 0n, 60_000))
    }
    await until(() => stats().parked === total, `${total} fetches to park`, 30_000)
    const parkMs = Number(process.hrtime.bigint() - parkStart) / 1e6
    const heapAfter = heapAfterGc()

    const cpuBefore = process.cpuUsage()
    const idleStart = process.hrtime.bigint()
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
    const cpu = process.cpuUsage(cpuBefore)
    const idleMs = Number(process.hrtime.bigint() - idleStart) / 1e6
    if (stats().parked !== total) throw new Error(`only ${stats().parked} of ${total} fetches still parked after ${IDLE_MS} ms`)

    // One small batch to each partition, from 10 producer connections, all written at once.
    const batch = buildBatch([{ value: Buffer.alloc(100, 2) }])
    const completeStart = process.hrtime.bigint()
    const produced: Promise<ProduceResponse>[] = []
    for (let p = 0; p < PARTITIONS; p++) produced.push(produceOne(producers[p % producers.length]!, topic, p, batch))
    const answered = await Promise.all(fetches)
    const completeMs = Number(process.hrtime.bigint() - completeStart) / 1e6
    for (const res of answered) expectRecords(res, 'parked fetch')
    for (const res of await Promise.all(produced)) expectProduced(res)
    if (stats().completed - completedBefore !== total) throw new Error(`${stats().completed - completedBefore} of ${total} completed through the purgatory`)

    const extraHeap = heapAfter - heapBefore
    const cpuMs = (cpu.user + cpu.system) / 1000
    const label = `${total.toLocaleString('en-US')} parked fetches (${CONNECTIONS} connections, ${PARTITIONS.toLocaleString('en-US')} partitions)`
    rows.push({ case: `${label}: time to park them all`, value: parkMs, unit: 'ms', target: '' })
    rows.push({ case: `${label}: extra heap after gc (clients' pending requests included)`, value: extraHeap / (1024 * 1024), unit: 'MiB', target: '< 64 MiB' })
    const clients = await clientShare()
    rows.push({ case: `${label}: of which the clients' pending requests (measured apart)`, value: clients / (1024 * 1024), unit: 'MiB', target: '' })
    rows.push({ case: `${label}: broker's extra heap per parked fetch (clients' share subtracted)`, value: (extraHeap - clients) / total, unit: 'bytes', target: '' })
    rows.push({ case: `${label}: CPU while parked and idle for ${(idleMs / 1000).toFixed(1)} s (user + system)`, value: cpuMs, unit: 'ms', target: '' })
    rows.push({ case: `${label}: complete all by 1,000 produces (first produce written -> last fetch answered)`, value: completeMs, unit: 'ms', target: '' })
    return {
      fetches: total,
      parkMs,
      extraHeapBytes: extraHeap,
      clientHeapBytes: clients,
      brokerHeapBytesPerFetch: (extraHeap - clients) / total,
      idleMs,
      idleCpuUserMs: cpu.user / 1000,
      idleCpuSystemMs: cpu.system / 1000,
      completeMs,
    }
  } finally {
    for (const client of [...consumers, ...producers]) await client.close()
  }
}

/** Heap that the pending fetches hold in the clients alone: sent to a server that reads and never answers. */
async function clientShare(): Promise<number> {
  const server = createServer((socket) => socket.resume())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const bootstrap = `127.0.0.1:${(server.address() as AddressInfo).port}`
  const clients: KafkaClient[] = []
  try {
    for (let c = 0; c < CONNECTIONS; c++) clients.push(await connectTo(bootstrap, { clientId: `bench-consumer-${c}` }))
    const before = heapAfterGc()
    const pending: Promise<unknown>[] = []
    for (let c = 0; c < CONNECTIONS; c++) {
      for (let j = 0; j < FETCHES_PER_CONNECTION; j++) pending.push(fetchOne(clients[c]!, 'fetch-parked', (c * FETCHES_PER_CONNECTION + j) % PARTITIONS, 0n, 60_000).catch(() => {}))
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
    const after = heapAfterGc()
    if (pending.length !== CONNECTIONS * FETCHES_PER_CONNECTION) throw new Error('unreachable')
    return after - before
  } finally {
    for (const client of clients) await client.close()
    await new Promise((resolve) => server.close(resolve))
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ferrolog-fetch-bench-'))
  const rows: Row[] = []
  const loadBefore = loadavg()
  let broker: Broker | undefined
  let results: Record<string, Record<string, number>>
  try {
    broker = await Broker.start(brokerConfigFrom({ listeners: '127.0.0.1:0', 'log.dirs': root, 'transfer.mode': TRANSFER_MODE }), { backend: 'native', logger: silentLogger })
    const bootstrap = `127.0.0.1:${broker.port}`
    results = { latency: await latency(broker, bootstrap, rows), parked: await manyParked(broker, bootstrap, rows) }
  } finally {
    await broker?.stop()
    rmSync(root, { recursive: true, force: true })
  }
  const loadAfter = loadavg()

  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ')
  console.log(`ferrolog fetch path benchmarks (${machine}), transfer ${TRANSFER_MODE}, load average ${load(loadBefore)} before, ${load(loadAfter)} after\n`)
  console.log('| case | value | unit | target |')
  console.log('|---|---:|---|---|')
  for (const r of rows) {
    const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2))
    console.log(`| ${r.case} | ${fmt(r.value)} | ${r.unit} | ${r.target || '-'} |`)
  }
  const outDir = join(__dirname, '..', '..', 'bench', '.out')
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'fetch.json'), JSON.stringify({ machine, loadavgBefore: loadBefore, loadavgAfter: loadAfter, results, rows }, null, 2))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
