/**
 * A client that pipelines Fetches and never reads holds a bounded number of the broker's file
 * descriptors: every queued response's FileRecords shares its segment's one handle (the native
 * engine's Arc<File>, the twin's dup of its segment descriptor), instead of opening the file
 * once per response, which let 45 such connections exhaust the process's descriptors (EMFILE).
 * Retention deleting the segment while the responses wait does not change what they send.
 */
import { existsSync, readdirSync } from 'node:fs'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { deleteRecordsCodec } from '../../ts/protocol/apis/delete-records.js'
import { fetchCodec, type FetchRequest } from '../../ts/protocol/apis/fetch.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { readResponseHeader, writeRequestHeader } from '../../ts/protocol/header.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'
import { createTopicOn, spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const PIPELINED = 300
const FETCH_VERSION = 12
const TOPIC = 'pipelined'

let broker: BrokerProcess | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await broker?.stop()
  broker = undefined
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length
}

/** The process's descriptor count once it has stopped changing (five equal readings 100 ms apart). */
async function settledFds(pid: number): Promise<number> {
  let last = -1
  let same = 0
  for (let i = 0; i < 100 && same < 5; i++) {
    const n = openFds(pid)
    same = n === last ? same + 1 : 0
    last = n
    await sleep(100)
  }
  return last
}

const fromStart: FetchRequest = fetchRequest({
  topics: [{ topic: TOPIC, topicId: Buffer.alloc(16), partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
})

function fetchFrame(correlationId: number): Buffer {
  const w = new Writer()
  w.int32(0)
  writeRequestHeader(w, { apiKey: fetchCodec.apiKey, apiVersion: FETCH_VERSION, correlationId, clientId: 'pipeliner' }, true)
  fetchCodec.encodeRequest(w, FETCH_VERSION, fromStart)
  const bytes = w.finish()
  bytes.writeInt32BE(bytes.length - 4, 0)
  return bytes
}

/** Reads `count` Fetch responses from `socket` (which nothing has read yet): their records. */
function readFetchResponses(socket: Socket, count: number): Promise<Array<{ correlationId: number; errorCode: number; records: Buffer | null }>> {
  return new Promise((resolve, reject) => {
    const out: Array<{ correlationId: number; errorCode: number; records: Buffer | null }> = []
    let buffered = Buffer.alloc(0)
    const timer = setTimeout(() => reject(new Error(`${out.length} of ${count} responses in 60 s`)), 60_000)
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`closed after ${out.length} of ${count} responses`)))
    socket.on('data', (d: Buffer) => {
      buffered = Buffer.concat([buffered, d])
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const size = buffered.readInt32BE(0)
        const r = new Reader(buffered.subarray(4, 4 + size))
        buffered = buffered.subarray(4 + size)
        const correlationId = readResponseHeader(r, true)
        const res = fetchCodec.decodeResponse(r, FETCH_VERSION)
        const p = res.responses[0].partitions[0]
        out.push({ correlationId, errorCode: p.errorCode, records: p.records === null ? null : Buffer.from(p.records) })
        if (out.length === count) {
          clearTimeout(timer)
          resolve(out)
        }
      }
    })
  })
}

describe.each(['native', 'js'] as const)('Fetches pipelined without reading (%s)', (backend) => {
  it('hold a bounded number of descriptors, and retention deleting the segment meanwhile keeps their bytes', async () => {
    broker = await spawnBroker({ backend, props: { 'log.retention.check.interval.ms': '200' } })
    await createTopicOn(broker.port, TOPIC, 1, { 'segment.bytes': String(1 << 20) })
    const client = new KafkaWire(await connectTo(broker.port), 'setup')
    sockets.push(client.socket)
    // Twelve batches of ~120 KB: the first segment holds the first eight, a second one the rest.
    for (let i = 0; i < 12; i++) {
      const values = Array.from({ length: 30 }, (_, j) => ({ value: Buffer.alloc(4000, (i * 30 + j) % 251) }))
      const res = await client.send(produceCodec, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildBatch(values) }] }] })
      expect(res.responses[0].partitionResponses[0].errorCode).toBe(0)
    }
    const reference = (await client.send(fetchCodec, FETCH_VERSION, fromStart)).responses[0].partitions[0].records!
    expect(reference.length).toBeGreaterThan(512 * 1024)

    const before = await settledFds(broker.pid)
    const pipeliner = await connectTo(broker.port)
    sockets.push(pipeliner)
    pipeliner.pause()
    pipeliner.write(Buffer.concat(Array.from({ length: PIPELINED }, (_, i) => fetchFrame(i + 1))))
    const held = (await settledFds(broker.pid)) - before
    console.log(`${PIPELINED} Fetches queued on one unread connection (${backend}): ${held} more descriptors in the broker (${before} before)`)
    expect(held).toBeLessThan(20)

    // Retention deletes the first segment while the responses wait.
    const deleted = await client.send(deleteRecordsCodec, 2, { topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: -1n }] }], timeoutMs: 5000 })
    expect(deleted.topics[0].partitions[0].errorCode).toBe(0)
    const firstSegment = join(broker.dataDir, `${TOPIC}-0`, '00000000000000000000.log')
    for (let i = 0; i < 100 && (existsSync(firstSegment) || existsSync(`${firstSegment}.deleted`)); i++) await sleep(100)
    expect(existsSync(firstSegment) || existsSync(`${firstSegment}.deleted`)).toBe(false)

    const responses = readFetchResponses(pipeliner, PIPELINED)
    pipeliner.resume()
    const got = await responses
    expect(got.map((r) => r.correlationId)).toEqual(Array.from({ length: PIPELINED }, (_, i) => i + 1))
    // Each was answered when it arrived, from the first segment: the same bytes, deleted or not.
    for (const r of got) {
      expect(r.errorCode).toBe(0)
      expect(r.records!.equals(reference)).toBe(true)
    }
    // Released once sent: the deleted segment's file is no longer held.
    expect((await settledFds(broker.pid)) - before).toBeLessThan(5)
  }, 120_000)
})
