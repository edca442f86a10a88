/**
 * Frames of ApiVersions, Metadata, the topic admin APIs, InitProducerId, DeleteRecords and
 * OffsetForLeaderEpoch exchanged by real clients (Java 4.4, librdkafka 2.0.2) and a real Kafka
 * 4.4 broker (__test__/fixtures/protocol/control-path, made by tools/kafka/capture-protocol.sh):
 * our codecs decode every frame, use every byte, and encode what they decoded back to the same
 * bytes.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ApiCodec } from '../../../ts/protocol/apis/api.js'
import { apiVersionsCodec, type ApiVersionsRequest, type ApiVersionsResponse, writeUnsupportedApiVersionsResponse } from '../../../ts/protocol/apis/api-versions.js'
import { createPartitionsCodec } from '../../../ts/protocol/apis/create-partitions.js'
import { createTopicsCodec, type CreateTopicsRequest, type CreateTopicsResponse } from '../../../ts/protocol/apis/create-topics.js'
import { deleteRecordsCodec, type DeleteRecordsResponse } from '../../../ts/protocol/apis/delete-records.js'
import { deleteTopicsCodec, type DeleteTopicsRequest, type DeleteTopicsResponse } from '../../../ts/protocol/apis/delete-topics.js'
import { describeConfigsCodec, type DescribeConfigsRequest, type DescribeConfigsResponse } from '../../../ts/protocol/apis/describe-configs.js'
import { initProducerIdCodec, type InitProducerIdRequest, type InitProducerIdResponse } from '../../../ts/protocol/apis/init-producer-id.js'
import { metadataCodec, type MetadataRequest, type MetadataResponse } from '../../../ts/protocol/apis/metadata.js'
import { offsetForLeaderEpochCodec, type OffsetForLeaderEpochRequest, type OffsetForLeaderEpochResponse } from '../../../ts/protocol/apis/offset-for-leader-epoch.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'
import { readRequestHeaderRest, readRequestHeaderStart, readResponseHeader } from '../../../ts/protocol/header.js'
import { Reader } from '../../../ts/protocol/reader.js'
import { Writer } from '../../../ts/protocol/writer.js'
import { encode, expectCorruptionThrowsProtocolError, type Kind } from './codec-harness.js'

const DIR = join(__dirname, '../../fixtures/protocol/control-path')

type AnyCodec = ApiCodec<any, any>

interface Frame<T> {
  clientId: string | null
  correlationId: number
  body: Buffer
  value: T
}

/** Reads a captured frame (header and body, no size prefix) and decodes its body. */
function readFrame<T>(file: string, codec: AnyCodec, kind: Kind, version: number): Frame<T> {
  const frame = readFileSync(join(DIR, file))
  const r = new Reader(frame)
  const flexible = version >= codec.flexibleFrom
  let clientId: string | null = null
  let correlationId: number
  if (kind === 'request') {
    const start = readRequestHeaderStart(r)
    expect([start.apiKey, start.apiVersion]).toEqual([codec.apiKey, version])
    correlationId = start.correlationId
    clientId = readRequestHeaderRest(r, flexible)
  } else {
    // ApiVersions answers with response header v0 whatever the version.
    correlationId = readResponseHeader(r, flexible && codec !== apiVersionsCodec)
  }
  const body = frame.subarray(r.pos)
  const value = (kind === 'request' ? codec.decodeRequest(r, version) : codec.decodeResponse(r, version)) as T
  expect(r.remaining, `${file}: bytes left unread`).toBe(0)
  return { clientId, correlationId, body, value }
}

/** Decodes, checks that encoding gives the same bytes back, and corrupts the body. */
function exchange<Req, Res>(name: string, codec: ApiCodec<Req, Res>, version: number, client: string) {
  const request = readFrame<Req>(`${name}-request.${client}.bin`, codec, 'request', version)
  const response = readFrame<Res>(`${name}-response.kafka.bin`, codec, 'response', version)
  expect(response.correlationId).toBe(request.correlationId)
  expect(encode(codec, 'request', version, request.value).equals(request.body), `${name}: request re-encoded differs`).toBe(true)
  expect(encode(codec, 'response', version, response.value).equals(response.body), `${name}: response re-encoded differs`).toBe(true)
  return { request, response }
}

const ZERO_ID = Buffer.alloc(16)

describe('frames between real clients and Kafka 4.4', () => {
  it('ApiVersions v3 (Java client; the broker advertises its own ranges)', () => {
    const { request, response } = exchange<ApiVersionsRequest, ApiVersionsResponse>('api-versions-v3', apiVersionsCodec, 3, 'java')
    expect(request.value).toEqual({ clientSoftwareName: 'apache-kafka-java', clientSoftwareVersion: '4.4.0', clusterId: null, nodeId: -1 })
    expect(response.value.errorCode).toBe(0)
    expect(response.value.apiKeys.find((k) => k.apiKey === 18)).toEqual({ apiKey: 18, minVersion: 0, maxVersion: 5 })
    expect(response.value.apiKeys.find((k) => k.apiKey === 3)).toEqual({ apiKey: 3, minVersion: 0, maxVersion: 13 })
  })

  it('ApiVersions v3 request of librdkafka', () => {
    const { clientId, value } = readFrame<ApiVersionsRequest>('api-versions-v3-request.librdkafka.bin', apiVersionsCodec, 'request', 3)
    expect(clientId).toBe('rdkafka')
    expect(value).toEqual({ clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.0.2', clusterId: null, nodeId: -1 })
  })

  it('an unsupported ApiVersions version: our answer has the shape of Kafka’s', () => {
    // What the Java client sends first: ApiVersions v5, which we do not serve.
    const v5 = new Reader(readFileSync(join(DIR, 'api-versions-v5-request.java.bin')))
    const start = readRequestHeaderStart(v5)
    expect([start.apiKey, start.apiVersion]).toEqual([18, 5])
    // Kafka's answer to a v127 request (correlationId 7): header v0, v0 body, ApiVersions 0-5.
    const kafka = readFileSync(join(DIR, 'api-versions-v127-response.kafka.bin'))
    const r = new Reader(kafka)
    expect(readResponseHeader(r, false)).toBe(7)
    const body = apiVersionsCodec.decodeResponse(r, 0)
    expect(r.remaining).toBe(0)
    expect(body.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION)
    expect(body.apiKeys).toEqual([{ apiKey: 18, minVersion: 0, maxVersion: 5 }])
    const w = new Writer()
    writeUnsupportedApiVersionsResponse(w, 7)
    const ours = Buffer.from(kafka)
    ours.writeInt16BE(apiVersionsCodec.maxVersion, ours.length - 2)
    expect(w.finish().toString('hex')).toBe(ours.toString('hex'))
  })

  it('Metadata v12 (Java producer: one topic; admin: no topics)', () => {
    const { request, response } = exchange<MetadataRequest, MetadataResponse>('metadata-v12', metadataCodec, 12, 'java')
    expect(request.value.topics).toEqual([{ topicId: ZERO_ID, name: 'orders' }])
    const [topic] = response.value.topics
    expect(topic.name).toBe('orders')
    expect(topic.topicId.equals(ZERO_ID)).toBe(false)
    expect(topic.partitions.map((p) => p.partitionIndex).sort()).toEqual([0, 1, 2])
    expect(response.value.clusterId).toBe('ZmVycm9sb2ctZml4dHVyZQ')
    const none = exchange<MetadataRequest, MetadataResponse>('metadata-v12-no-topics', metadataCodec, 12, 'java')
    expect(none.request.value.topics).toEqual([])
    expect(none.response.value.topics).toEqual([])
  })

  it('Metadata v4 (librdkafka, classic encoding)', () => {
    const { request, response } = exchange<MetadataRequest, MetadataResponse>('metadata-v4', metadataCodec, 4, 'librdkafka')
    expect(request.value.topics).toEqual([{ topicId: ZERO_ID, name: 'kept' }])
    expect(response.value.topics.map((t) => t.name)).toEqual(['kept'])
    expect(response.value.topics[0].partitions[0].leaderEpoch).toBe(-1) // not in v4
  })

  it('CreateTopics v7 (configs and a manual assignment; then an existing topic)', () => {
    const { request, response } = exchange<CreateTopicsRequest, CreateTopicsResponse>('create-topics-v7', createTopicsCodec, 7, 'java')
    expect(request.value.topics.map((t) => t.name).sort()).toEqual(['kept', 'manual', 'orders'])
    const manual = request.value.topics.find((t) => t.name === 'manual')!
    expect([manual.numPartitions, manual.replicationFactor, manual.assignments.length]).toEqual([-1, -1, 2])
    const orders = response.value.topics.find((t) => t.name === 'orders')!
    expect([orders.errorCode, orders.numPartitions, orders.replicationFactor]).toEqual([0, 2, 1])
    expect(orders.configs!.find((c) => c.name === 'retention.ms')?.value).toBe('3600000')
    const exists = exchange<CreateTopicsRequest, CreateTopicsResponse>('create-topics-v7-validate-only', createTopicsCodec, 7, 'java')
    expect(exists.request.value.validateOnly).toBe(true)
    expect(exists.response.value.topics[0]).toMatchObject({ errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: "Topic 'orders' already exists." })
  })

  it('DescribeConfigs v4 (synonyms and documentation)', () => {
    const { request, response } = exchange<DescribeConfigsRequest, DescribeConfigsResponse>('describe-configs-v4', describeConfigsCodec, 4, 'java')
    expect(request.value).toMatchObject({ includeSynonyms: true, includeDocumentation: true })
    const retention = response.value.results[0].configs.find((c) => c.name === 'retention.ms')!
    expect(retention.value).toBe('3600000')
    expect(retention.synonyms.length).toBeGreaterThan(0)
    expect(retention.documentation).toMatch(/\w/)
  })

  it('CreatePartitions v3', () => {
    const { request, response } = exchange('create-partitions-v3', createPartitionsCodec, 3, 'java')
    expect(request.value).toEqual({ topics: [{ name: 'orders', count: 3, assignments: null }], timeoutMs: 30000, validateOnly: false })
    expect(response.value.results).toEqual([{ name: 'orders', errorCode: 0, errorMessage: null }])
  })

  it('InitProducerId v5 (idempotent and transactional Java producers) and v4 (librdkafka)', () => {
    const idempotent = exchange<InitProducerIdRequest, InitProducerIdResponse>('init-producer-id-v5', initProducerIdCodec, 5, 'java')
    expect(idempotent.request.value).toEqual({ transactionalId: null, transactionTimeoutMs: 2147483647, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false })
    expect(idempotent.response.value.errorCode).toBe(0)
    const txn = exchange<InitProducerIdRequest, InitProducerIdResponse>('init-producer-id-v5-transactional', initProducerIdCodec, 5, 'java')
    expect(txn.request.value.transactionalId).toBe('capture-txn-1')
    const rdkafka = exchange<InitProducerIdRequest, InitProducerIdResponse>('init-producer-id-v4', initProducerIdCodec, 4, 'librdkafka')
    expect(rdkafka.request.value.transactionalId).toBe(null)
  })

  it('DeleteRecords v2', () => {
    const { request, response } = exchange<unknown, DeleteRecordsResponse>('delete-records-v2', deleteRecordsCodec, 2, 'java')
    expect(request.value).toEqual({ topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 2n }] }], timeoutMs: 60000 })
    expect(response.value.topics[0].partitions[0]).toEqual({ partitionIndex: 0, lowWatermark: 2n, errorCode: 0 })
  })

  it('OffsetForLeaderEpoch v4 (a consumer validating its position)', () => {
    const { request, response } = exchange<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>('offset-for-leader-epoch-v4', offsetForLeaderEpochCodec, 4, 'java')
    expect(request.value).toEqual({
      replicaId: -1,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 }] }],
    })
    expect(response.value.topics[0].partitions[0]).toMatchObject({ errorCode: 0, partition: 0, leaderEpoch: 0 })
  })

  it('DeleteTopics v6 by name and by id', () => {
    const byName = exchange<DeleteTopicsRequest, DeleteTopicsResponse>('delete-topics-v6-by-name', deleteTopicsCodec, 6, 'java')
    expect(byName.request.value.topics).toEqual([{ name: 'manual', topicId: ZERO_ID }])
    const byId = exchange<DeleteTopicsRequest, DeleteTopicsResponse>('delete-topics-v6-by-id', deleteTopicsCodec, 6, 'java')
    const [topic] = byId.request.value.topics
    expect(topic.name).toBe(null)
    expect(byId.response.value.responses[0].name).toBe('orders')
    expect(byId.response.value.responses[0].topicId.equals(topic.topicId)).toBe(true)
  })

  it('corrupted captured bodies throw ProtocolError only', () => {
    const cases: Array<[string, AnyCodec, Kind, number]> = [
      ['metadata-v12-response.kafka.bin', metadataCodec, 'response', 12],
      ['metadata-v4-response.kafka.bin', metadataCodec, 'response', 4],
      ['create-topics-v7-request.java.bin', createTopicsCodec, 'request', 7],
      ['api-versions-v3-response.kafka.bin', apiVersionsCodec, 'response', 3],
      ['delete-topics-v6-by-id-request.java.bin', deleteTopicsCodec, 'request', 6],
    ]
    for (const [file, codec, kind, version] of cases) {
      const { body } = readFrame(file, codec, kind, version)
      expectCorruptionThrowsProtocolError(codec, kind, version, body, body.length)
    }
  })
})
