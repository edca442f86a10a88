/**
 * Frames that Apache Kafka 4.4's console producer and consumer exchanged with a Kafka 4.4 broker
 * (__test__/fixtures/protocol/data-path, made by capture-data-path-frames.test.ts): our codecs
 * decode every one of them, using every byte, and encode what they decoded back to the same bytes.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ApiCodec } from '../../../ts/protocol/apis/api.js'
import { type FetchRequest, type FetchResponse, fetchCodec } from '../../../ts/protocol/apis/fetch.js'
import { type ListOffsetsRequest, type ListOffsetsResponse, listOffsetsCodec } from '../../../ts/protocol/apis/list-offsets.js'
import { type ProduceRequest, type ProduceResponse, produceCodec } from '../../../ts/protocol/apis/produce.js'
import { readRequestHeaderRest, readRequestHeaderStart, readResponseHeader, writeRequestHeader, writeResponseHeader } from '../../../ts/protocol/header.js'
import { Reader } from '../../../ts/protocol/reader.js'
import { decodeBatches } from '../../../ts/protocol/records.js'
import { Writer } from '../../../ts/protocol/writer.js'

const DIR = join(__dirname, '../../fixtures/protocol/data-path')
const CODECS: Record<string, ApiCodec<any, any>> = { produce: produceCodec, fetch: fetchCodec, 'list-offsets': listOffsetsCodec }

interface Captured {
  api: string
  version: number
  request: Buffer
  response: Buffer
}

const captured: Captured[] = readdirSync(DIR)
  .filter((f) => f.endsWith('-request.bin'))
  .sort()
  .map((f) => {
    const [, api, version] = /^(.+)-v(\d+)-request\.bin$/.exec(f)!
    return {
      api,
      version: Number(version),
      request: readFileSync(join(DIR, f)),
      response: readFileSync(join(DIR, f.replace('-request', '-response'))),
    }
  })

/** Decodes a request frame (header + body) and checks that re-encoding gives the same bytes. */
function requestOf<T>(c: Captured): T {
  const codec = CODECS[c.api]
  const flexible = c.version >= codec.flexibleFrom
  const r = new Reader(c.request)
  const start = readRequestHeaderStart(r)
  expect([start.apiKey, start.apiVersion]).toEqual([codec.apiKey, c.version])
  const clientId = readRequestHeaderRest(r, flexible)
  const body = codec.decodeRequest(r, c.version)
  expect(r.remaining).toBe(0)
  const w = new Writer()
  writeRequestHeader(w, { ...start, clientId }, flexible)
  codec.encodeRequest(w, c.version, body)
  expect(w.finish().toString('hex')).toBe(c.request.toString('hex'))
  return body
}

function responseOf<T>(c: Captured): T {
  const codec = CODECS[c.api]
  const flexible = c.version >= codec.flexibleFrom
  const r = new Reader(c.response)
  const correlationId = readResponseHeader(r, flexible)
  expect(correlationId).toBe(c.request.readInt32BE(4))
  const body = codec.decodeResponse(r, c.version)
  expect(r.remaining).toBe(0)
  const w = new Writer()
  writeResponseHeader(w, correlationId, flexible)
  codec.encodeResponse(w, c.version, body)
  expect(w.finish().toString('hex')).toBe(c.response.toString('hex'))
  return body
}

const values = (records: Buffer | null) => (records === null ? [] : decodeBatches(records).flatMap((b) => b.records.map((r) => `${r.key}:${r.value}`)))

const one = (api: string, version: number): Captured => {
  const c = captured.find((c) => c.api === api && c.version === version)
  if (!c) throw new Error(`no fixture ${api}-v${version}`)
  return c
}

describe('frames captured between Kafka 4.4 clients and a Kafka 4.4 broker', () => {
  it('are all there', () => {
    expect(captured.map((c) => `${c.api}-v${c.version}`)).toEqual(['fetch-v11', 'fetch-v17', 'list-offsets-v5', 'list-offsets-v9', 'produce-v11', 'produce-v8'])
  })

  it.each(captured.map((c) => [`${c.api} v${c.version}`, c] as const))('%s: decode and re-encode byte for byte', (_, c) => {
    requestOf(c)
    responseOf(c)
  })

  it.each([8, 11])('Produce v%i carries the console producer records', (v) => {
    const req = requestOf<ProduceRequest>(one('produce', v))
    expect(req.transactionalId).toBeNull()
    expect(req.acks).toBe(-1)
    expect(req.topicData).toHaveLength(1)
    expect(req.topicData[0].name).toMatch(/^capture-/)
    expect(values(req.topicData[0].partitionData[0].records)).toEqual(['k1:hello', 'k2:world'])
    const res = responseOf<ProduceResponse>(one('produce', v))
    expect(res.responses[0].partitionResponses[0]).toMatchObject({ index: 0, errorCode: 0, baseOffset: 0n })
  })

  it('Fetch v17: topic ids, a new session, the records back', () => {
    const req = requestOf<FetchRequest>(one('fetch', 17))
    expect(req).toMatchObject({ replicaId: -1, sessionId: 0, sessionEpoch: 0, isolationLevel: 0, rackId: '' })
    expect(req.replicaState).toEqual({ replicaId: -1, replicaEpoch: -1n }) // Kafka's default: not a follower
    expect(req.topics[0].topic).toBe('')
    expect(req.topics[0].topicId.equals(Buffer.alloc(16))).toBe(false)
    const res = responseOf<FetchResponse>(one('fetch', 17))
    expect(res.sessionId).not.toBe(0)
    expect(res.responses[0].topicId.equals(req.topics[0].topicId)).toBe(true)
    expect(res.responses[0].partitions[0]).toMatchObject({ errorCode: 0, highWatermark: 2n, logStartOffset: 0n })
    expect(values(res.responses[0].partitions[0].records)).toEqual(['k1:hello', 'k2:world'])
  })

  it('Fetch v11: topic names, classic encoding', () => {
    const req = requestOf<FetchRequest>(one('fetch', 11))
    expect(req.topics[0].topic).toBe('capture-classic')
    const res = responseOf<FetchResponse>(one('fetch', 11))
    expect(res.responses[0].topic).toBe('capture-classic')
    expect(values(res.responses[0].partitions[0].records)).toEqual(['k1:hello', 'k2:world'])
  })

  it.each([5, 9])('ListOffsets v%i asks for the earliest offset', (v) => {
    const req = requestOf<ListOffsetsRequest>(one('list-offsets', v))
    expect(req.topics[0].partitions[0]).toMatchObject({ partitionIndex: 0, timestamp: -2n })
    const res = responseOf<ListOffsetsResponse>(one('list-offsets', v))
    expect(res.topics[0].partitions[0]).toMatchObject({ errorCode: 0, offset: 0n })
  })
})
