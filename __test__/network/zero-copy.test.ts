/**
 * Zero-copy Fetch responses over real sockets (docs/fetch.md "Zero-copy from a Node process"): the record bytes go from the
 * segment files to the socket on the transfer engine's thread. The same fetches put the same
 * bytes on the wire in zero-copy and copy mode; a consumer that disconnects mid-transfer, a slow
 * consumer, a long pipeline of small fetches and produces on one connection, and a segment that
 * retention deletes while a slice of it is in flight are all served without a crash or a wrong
 * byte, and copy mode (ranges read into reused buffers a piece at a time) copes alike.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { fetchCodec, type FetchRequest, type FetchResponse, type FetchTopic } from '../../ts/protocol/apis/fetch.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { readResponseHeader, writeRequestHeader } from '../../ts/protocol/header.js'
import { Reader } from '../../ts/protocol/reader.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import { Writer } from '../../ts/protocol/writer.js'
import type { Broker } from '../../ts/server/broker.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { MAX_QUEUED_REQUESTS } from '../../ts/network/connection.js'
import { COPY_CHUNK_BYTES } from '../../ts/network/transfer.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'zero-copy'

let broker: Broker | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await broker?.stop()
  broker = undefined
})

async function start(transfer: 'zero-copy' | 'copy', dataDir?: string, props: Record<string, string> = {}, backend: BackendName = 'native'): Promise<Broker> {
  broker = await startBroker({ dataDir, backend, props: { 'transfer.mode': transfer, ...props } })
  return broker
}

async function open(port: number): Promise<Socket> {
  const socket = await connectTo(port)
  sockets.push(socket)
  return socket
}

/** Size-prefixed request bytes. */
function frame<Req>(codec: ApiCodec<Req, unknown>, version: number, correlationId: number, request: Req): Buffer {
  const w = new Writer()
  w.int32(0)
  writeRequestHeader(w, { apiKey: codec.apiKey, apiVersion: version, correlationId, clientId: 'zero-copy-test' }, version >= codec.flexibleFrom)
  codec.encodeRequest(w, version, request)
  const bytes = w.finish()
  bytes.writeInt32BE(bytes.length - 4, 0)
  return bytes
}

/** Reads whole response frames (size prefix included) off a socket, in order. */
class FrameReader {
  private chunks: Buffer[] = []
  private buffered = 0
  private readonly frames: Buffer[] = []
  private readonly waiting: Array<(f: Buffer) => void> = []
  received = 0

  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.received += d.length
      this.chunks.push(d)
      this.buffered += d.length
      // Joined only once a whole frame is there: large frames arrive in many chunks.
      while (this.buffered >= 4) {
        const head = this.chunks[0].length >= 4 ? this.chunks[0] : Buffer.concat(this.chunks)
        const size = head.readInt32BE(0)
        if (this.buffered < 4 + size) return
        const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
        const f = all.subarray(0, 4 + size)
        const rest = all.subarray(4 + size)
        this.chunks = rest.length > 0 ? [rest] : []
        this.buffered = rest.length
        const waiter = this.waiting.shift()
        if (waiter) waiter(f)
        else this.frames.push(f)
      }
    })
  }

  next(): Promise<Buffer> {
    const f = this.frames.shift()
    return f ? Promise.resolve(f) : new Promise((resolve) => this.waiting.push(resolve))
  }
}

function decodeFetch(f: Buffer, version: number, correlationId: number): FetchResponse {
  const r = new Reader(f.subarray(4))
  expect(readResponseHeader(r, version >= fetchCodec.flexibleFrom)).toBe(correlationId)
  return fetchCodec.decodeResponse(r, version)
}

function topics(...partitions: Array<[number, bigint, number?]>): FetchTopic[] {
  return [
    {
      topic: TOPIC,
      topicId: broker!.topics.get(TOPIC)!.topicId,
      partitions: partitions.map(([partition, fetchOffset, partitionMaxBytes]) => ({
        partition,
        currentLeaderEpoch: -1,
        fetchOffset,
        lastFetchedEpoch: -1,
        logStartOffset: -1n,
        partitionMaxBytes: partitionMaxBytes ?? 1024 * 1024,
      })),
    },
  ]
}

/** Appends `batches` batches of `perBatch` records of `valueBytes` each to a partition. */
function fill(b: Broker, partition: number, batches: number, perBatch: number, valueBytes: number, seed = 0): void {
  const log = b.logManager.getLog(TOPIC, partition)!
  for (let i = 0; i < batches; i++) {
    const value = Buffer.alloc(valueBytes, (seed + i) % 251)
    log.append(buildBatch(Array.from({ length: perBatch }, (_, j) => ({ key: `k${i}-${j}`, value }))))
  }
}

describe.each(['native', 'js'] as const)('the same bytes on the wire in zero-copy and copy mode (%s backend)', (backend) => {
  it('answers a sequence of fetches (versions 4 to 17, several partitions, limits, mid-batch offsets) byte for byte alike', async () => {
    const dataDir = tempDir('ferrolog-zc-')
    let b = await start('copy', dataDir, {}, backend)
    // Segments of 1 MiB: a read of partition 0 is several of copy mode's pieces (copyTo).
    await b.createTopic(TOPIC, 3, { 'segment.bytes': String(1024 * 1024) })
    fill(b, 0, 400, 5, 700)
    fill(b, 1, 3, 1, 10, 7)
    // partition 2 stays empty
    const requests: Array<{ version: number; request: FetchRequest }> = []
    for (const version of [4, 7, 11, 12, 13, 15, 17]) {
      requests.push({ version, request: fetchRequest({ topics: topics([0, 0n], [1, 0n], [2, 0n]) }) })
      requests.push({ version, request: fetchRequest({ topics: topics([0, 333n, 100_000], [1, 1n]) }) })
      requests.push({ version, request: fetchRequest({ maxBytes: 50_000, topics: topics([1, 0n], [0, 500n]) }) })
      requests.push({ version, request: fetchRequest({ topics: topics([0, 999n, 1]) }) }) // one batch over the limit still comes
      requests.push({ version, request: fetchRequest({ topics: topics([0, 5000n]) }) }) // out of range
    }
    const capture = async (port: number): Promise<Buffer[]> => {
      const socket = await open(port)
      const reader = new FrameReader(socket)
      const out: Buffer[] = []
      // Pipelined: every request written at once, the responses read in order.
      socket.write(Buffer.concat(requests.map(({ version, request }, i) => frame(fetchCodec, version, i + 1, request))))
      for (let i = 0; i < requests.length; i++) out.push(await reader.next())
      socket.destroy()
      return out
    }
    const copied = await capture(b.port)
    expect(copied.some((f) => f.length > 3 * COPY_CHUNK_BYTES)).toBe(true)
    await b.stop()
    b = await start('zero-copy', dataDir, {}, backend)
    expect(b.transfer).not.toBeNull()
    const zeroCopied = await capture(b.port)
    const { stats } = b.transfer!
    expect(stats.jobs).toBeGreaterThan(requests.length / 2) // the responses with records went through the engine
    expect(stats.failed).toBe(0)

    expect(zeroCopied.length).toBe(copied.length)
    for (let i = 0; i < copied.length; i++) expect(zeroCopied[i].equals(copied[i]), `response ${i + 1} (v${requests[i].version})`).toBe(true)
    // And they are the answers they should be: records where there are some, errors where not.
    const first = decodeFetch(copied[0], 4, 1)
    expect(decodeBatches(first.responses[0].partitions[0].records!).length).toBeGreaterThan(10)
    expect(decodeBatches(first.responses[0].partitions[1].records!).map((x) => x.baseOffset)).toEqual([0n, 1n, 2n])
    const outOfRange = decodeFetch(copied[4], 4, 5)
    expect(outOfRange.responses[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE)
  })
})

describe('zero-copy under trouble', () => {
  it('survives a consumer that disconnects in the middle of a large transfer', async () => {
    const b = await start('zero-copy')
    await b.createTopic(TOPIC, 1, {})
    fill(b, 0, 96, 32, 16 * 1024) // 48 MiB: more than the socket buffers hold
    for (let round = 0; round < 5; round++) {
      const socket = await open(b.port)
      const reader = new FrameReader(socket)
      socket.write(frame(fetchCodec, 12, 1, fetchRequest({ maxBytes: 64 << 20, topics: topics([0, 0n, 64 << 20]) })))
      await until(() => reader.received > 256 * 1024)
      socket.destroy()
    }
    await until(() => b.transfer!.inFlight === 0)
    // The broker still serves: a full read on a new connection.
    const after = new FrameReader(await open(b.port))
    after.socket.write(frame(fetchCodec, 12, 7, fetchRequest({ maxBytes: 64 << 20, topics: topics([0, 0n, 64 << 20]) })))
    const res = decodeFetch(await after.next(), 12, 7)
    const batches = decodeBatches(res.responses[0].partitions[0].records!)
    expect(batches.length).toBe(96)
    expect(batches.at(-1)!.baseOffset).toBe(95n * 32n)
  })

  it('serves a slow consumer whose socket buffer stays full for seconds, and other connections meanwhile', async () => {
    const b = await start('zero-copy')
    await b.createTopic(TOPIC, 2, {})
    fill(b, 0, 96, 32, 16 * 1024) // 48 MiB on partition 0: more than the socket buffers hold
    const slow = await open(b.port)
    const slowReader = new FrameReader(slow)
    slow.pause()
    slow.write(frame(fetchCodec, 12, 1, fetchRequest({ maxBytes: 64 << 20, topics: topics([0, 0n, 64 << 20]) })))
    await sleep(200)
    // Produce and fetch on partition 1 while the slow transfer waits for buffer space.
    expect(await meanwhile(b, 2500)).toBeGreaterThan(10)
    await until(() => b.transfer!.inFlight === 1)
    slow.resume()
    const f = await slowReader.next()
    const res = decodeFetch(f, 12, 1)
    const expected = b.logManager.getLog(TOPIC, 0)!.readSlice(b.logManager.getLog(TOPIC, 0)!.read(0n, { maxBytes: 64 << 20 }).records)
    expect(Buffer.compare(res.responses[0].partitions[0].records!, expected)).toBe(0)
  })

  it('keeps thousands of small fetches and produces on one connection in order', async () => {
    const b = await start('zero-copy')
    await b.createTopic(TOPIC, 1, {})
    const socket = await open(b.port)
    const reader = new FrameReader(socket)
    const N = 1500
    const out: Buffer[] = []
    for (let i = 0; i < N; i++) {
      out.push(
        frame(produceCodec, 9, 2 * i + 1, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ value: `v${i}` }]) }] }] }),
      )
      out.push(frame(fetchCodec, 12, 2 * i + 2, fetchRequest({ topics: topics([0, BigInt(i)]) })))
    }
    socket.write(Buffer.concat(out))
    for (let i = 0; i < N; i++) {
      const produced = produceCodec.decodeResponse(afterHeader(await reader.next(), 2 * i + 1, 9 >= produceCodec.flexibleFrom), 9)
      expect(produced.responses[0].partitionResponses[0].baseOffset).toBe(BigInt(i))
      const fetched = decodeFetch(await reader.next(), 12, 2 * i + 2)
      const batches = decodeBatches(fetched.responses[0].partitions[0].records!)
      expect(batches[0].baseOffset).toBe(BigInt(i))
      expect(batches[0].records[0].value!.toString()).toBe(`v${i}`)
    }
  })

  it('stops reading a connection that pipelines fetches without reading answers, and serves them all once it reads', async () => {
    const b = await start('zero-copy')
    await b.createTopic(TOPIC, 1, {})
    fill(b, 0, 8, 4, 64 * 1024) // 2 MiB: every fetch below is answered with 1 MiB
    const socket = await open(b.port)
    const reader = new FrameReader(socket)
    socket.pause()
    const N = 2000
    const requests = Array.from({ length: N }, (_, i) => frame(fetchCodec, 12, i + 1, fetchRequest({ maxBytes: 1 << 20, topics: topics([0, 0n, 1 << 20]) })))
    socket.write(Buffer.concat(requests))
    // Bounded waits longer than until's default: this test moves 2 GiB, and a loaded machine is slow.
    await until(() => b.queuedRequests >= MAX_QUEUED_REQUESTS, 30_000)
    await sleep(300)
    // Bounded: the broker stopped reading at the limit (a few frames of the last chunk read may
    // have been dispatched before it noticed), far below the 2,000 sent.
    expect(b.queuedRequests).toBeLessThan(MAX_QUEUED_REQUESTS + 50)
    socket.resume()
    let last: Buffer | undefined
    for (let i = 1; i <= N; i++) {
      const f = await reader.next()
      expect(f.readInt32BE(4), 'correlation id').toBe(i)
      last = f
    }
    const res = decodeFetch(last!, 12, N)
    expect(res.responses[0].partitions[0].records!.length).toBeGreaterThan(1 << 19)
    await until(() => b.queuedRequests === 0, 30_000)
  }, 120_000)

  it.each(['zero-copy', 'copy'] as const)('completes cleanly a response sent in %s mode whose segment retention deletes meanwhile', async (mode) => {
    const b = await start(mode, undefined, { 'log.retention.check.interval.ms': '3600000' })
    // Segments of 16 MiB, more than the socket buffers hold, so that the transfer waits.
    await b.createTopic(TOPIC, 1, { 'segment.bytes': String(16 << 20), 'retention.bytes': String(16 << 20) })
    fill(b, 0, 96, 32, 16 * 1024) // 48 MiB
    const log = b.logManager.getLog(TOPIC, 0)!
    const first = join(b.config.dataDir, `${TOPIC}-0`, '00000000000000000000.log')
    const expected = log.readSlice(log.read(0n, { maxBytes: 16 << 20 }).records)
    const slow = await open(b.port)
    const reader = new FrameReader(slow)
    slow.pause()
    slow.write(frame(fetchCodec, 12, 1, fetchRequest({ maxBytes: 16 << 20, topics: topics([0, 0n, 16 << 20]) })))
    // Under way: a job of the engine, or the copy holding the connection's queue.
    await until(() => (b.transfer ? b.transfer.inFlight === 1 : b.queuedRequests === 1))
    const deleted = await b.logManager.cleanupLogs()
    expect(deleted).toBeGreaterThan(0)
    expect(existsSync(first)).toBe(false)
    slow.resume()
    const res = decodeFetch(await reader.next(), 12, 1)
    expect(Buffer.compare(res.responses[0].partitions[0].records!, expected)).toBe(0)
    // The next fetch at offset 0 is out of range: the log starts later now.
    const wire = new KafkaWire(await open(b.port), 'after')
    const again = await wire.send(fetchCodec, 12, fetchRequest({ topics: topics([0, 0n]) }))
    expect(again.responses[0].partitions[0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE)
  })
})

describe('copy mode under trouble', () => {
  it('serves a slow consumer piece by piece, survives one gone mid-response, and serves other connections meanwhile', async () => {
    const b = await start('copy')
    expect(b.transfer).toBeNull()
    await b.createTopic(TOPIC, 2, {})
    fill(b, 0, 96, 32, 16 * 1024) // 48 MiB on partition 0: more than the socket buffers hold
    const whole = fetchRequest({ maxBytes: 64 << 20, topics: topics([0, 0n, 64 << 20]) })
    const slow = await open(b.port)
    const slowReader = new FrameReader(slow)
    slow.pause()
    slow.write(frame(fetchCodec, 12, 1, whole))
    await until(() => b.queuedRequests === 1)
    const gone = await open(b.port)
    const goneReader = new FrameReader(gone)
    gone.write(frame(fetchCodec, 12, 1, whole))
    await until(() => goneReader.received > 256 * 1024)
    gone.destroy()
    expect(await meanwhile(b, 1500)).toBeGreaterThan(5)
    // Still held: the slow consumer's response waits for it, a piece at a time.
    expect(b.queuedRequests).toBe(1)
    slow.resume()
    const res = decodeFetch(await slowReader.next(), 12, 1)
    const log = b.logManager.getLog(TOPIC, 0)!
    const expected = log.readSlice(log.read(0n, { maxBytes: 64 << 20 }).records)
    expect(Buffer.compare(res.responses[0].partitions[0].records!, expected)).toBe(0)
    await until(() => b.queuedRequests === 0)
  })
})

/**
 * On a connection of its own, produces a batch to partition 1 every 100 ms for `ms`, then
 * fetches the partition: how many batches it holds.
 */
async function meanwhile(b: Broker, ms: number): Promise<number> {
  const other = new KafkaWire(await open(b.port), 'other')
  const started = Date.now()
  while (Date.now() - started < ms) {
    const produced = await other.send(produceCodec, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: TOPIC, partitionData: [{ index: 1, records: buildBatch([{ value: 'meanwhile' }]) }] }],
    })
    expect(produced.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE)
    await sleep(100)
  }
  const fetched = await other.send(fetchCodec, 12, fetchRequest({ topics: topics([1, 0n]) }))
  return decodeBatches(fetched.responses[0].partitions[0].records!).length
}

function afterHeader(f: Buffer, correlationId: number, flexible: boolean): Reader {
  const r = new Reader(f.subarray(4))
  expect(readResponseHeader(r, flexible)).toBe(correlationId)
  return r
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await sleep(10)
  }
}
