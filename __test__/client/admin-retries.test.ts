/**
 * The Admin's retries (admin-call.ts), against a fake broker over a real socket
 * (helpers/fake-kafka.ts) that answers the retriable errors a real broker gives only during
 * elections, coordinator moves and loads: NOT_CONTROLLER retries the topics it named and only
 * them, COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR find the coordinator again,
 * LEADER_NOT_AVAILABLE asks the leader again after new metadata, a node that is not up yet is
 * retried until it is, and an error that never clears fails the item with REQUEST_TIMED_OUT at
 * the call's timeout, naming the error it met.
 */
import { createServer, type AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Admin } from '../../ts/client/admin.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { ApiKey } from '../../ts/protocol/apis/api.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { deleteGroupsCodec } from '../../ts/protocol/apis/delete-groups.js'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { offsetFetchCodec } from '../../ts/protocol/apis/offset-fetch.js'
import { describeClusterCodec } from '../../ts/protocol/apis/describe-cluster.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { startFakeKafka, type FakeKafka, type FakeRequest } from '../helpers/fake-kafka.js'

const API_VERSIONS = [
  { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 3 },
  { apiKey: ApiKey.Metadata, minVersion: 0, maxVersion: 12 },
  { apiKey: ApiKey.CreateTopics, minVersion: 2, maxVersion: 7 },
  { apiKey: ApiKey.FindCoordinator, minVersion: 0, maxVersion: 6 },
  { apiKey: ApiKey.OffsetFetch, minVersion: 1, maxVersion: 9 },
  { apiKey: ApiKey.ListOffsets, minVersion: 1, maxVersion: 9 },
  { apiKey: ApiKey.DeleteGroups, minVersion: 0, maxVersion: 2 },
  { apiKey: ApiKey.DescribeCluster, minVersion: 0, maxVersion: 1 },
]

let fake: FakeKafka | undefined
let admin: Admin | undefined

afterEach(async () => {
  await admin?.close()
  await fake?.close()
  admin = fake = undefined
})

/** Answers FindCoordinator with the fake itself (node 0). */
function coordinator(req: FakeRequest, port: number): void {
  req.decode(findCoordinatorCodec)
  const c = { key: 'g', nodeId: 0, host: '127.0.0.1', port, errorCode: 0, errorMessage: null }
  const v4 = req.apiVersion >= 4
  req.answer(findCoordinatorCodec, { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 0, host: v4 ? '' : '127.0.0.1', port: v4 ? 0 : port, coordinators: v4 ? [c] : [] })
}

const count = (k: number) => fake!.seen.filter((s) => s.apiKey === k).length

describe('Admin retries', () => {
  it('NOT_CONTROLLER: only the topic that got it is sent again; the other is created once', async () => {
    const sent: string[][] = []
    fake = await startFakeKafka({
      apiVersions: API_VERSIONS,
      onRequest: (req) => {
        const r = req.decode(createTopicsCodec)
        sent.push(r.topics.map((t) => t.name))
        const first = sent.length === 1
        req.answer(createTopicsCodec, {
          throttleTimeMs: 0,
          topics: r.topics.map((t) => ({
            name: t.name,
            topicId: Buffer.alloc(16, 1),
            errorCode: first && t.name === 'a' ? ErrorCode.NOT_CONTROLLER : t.name === 'exists' ? ErrorCode.TOPIC_ALREADY_EXISTS : 0,
            errorMessage: null,
            topicConfigErrorCode: 0,
            numPartitions: 1,
            replicationFactor: 1,
            configs: [],
          })),
        })
      },
    })
    admin = new Admin({ bootstrapServers: `127.0.0.1:${fake.port}`, 'retry.backoff.ms': 10 })
    const result = admin.createTopics([{ name: 'a' }, { name: 'b' }, { name: 'exists' }])
    await expect(result.value('exists')).rejects.toMatchObject({ code: 'TOPIC_ALREADY_EXISTS' })
    const done = await Promise.all([result.value('a'), result.value('b')])
    expect(done.map((t) => t.numPartitions)).toEqual([1, 1])
    expect(sent).toEqual([['a', 'b', 'exists'], ['a']])
  })

  it('COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR: the coordinator is found again and asked again', async () => {
    let fetches = 0
    fake = await startFakeKafka({
      apiVersions: API_VERSIONS,
      onRequest: (req) => {
        if (req.apiKey === ApiKey.FindCoordinator) return coordinator(req, fake!.port)
        req.decode(offsetFetchCodec)
        fetches++
        const errorCode = fetches === 1 ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : fetches === 2 ? ErrorCode.NOT_COORDINATOR : 0
        const partitions = errorCode === 0 ? [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: 3, metadata: 'm', errorCode: 0 }] : []
        req.answer(offsetFetchCodec, { throttleTimeMs: 0, errorCode: 0, topics: [], groups: [{ groupId: 'g', errorCode, topics: [{ name: 't', topicId: Buffer.alloc(16), partitions }] }] })
      },
    })
    admin = new Admin({ bootstrapServers: `127.0.0.1:${fake.port}`, 'retry.backoff.ms': 10 })
    const offsets = await admin.listConsumerGroupOffsets('g')
    expect(offsets.get('t-0')).toEqual({ offset: 42n, leaderEpoch: 3, metadata: 'm' })
    expect(fetches).toBe(3)
    expect(count(ApiKey.FindCoordinator)).toBe(3)
  })

  it('LEADER_NOT_AVAILABLE from the leader: asked again after new metadata', async () => {
    let asked = 0
    fake = await startFakeKafka({
      apiVersions: API_VERSIONS,
      topics: [{ name: 't', partitions: 2 }],
      onRequest: (req) => {
        const r = req.decode(listOffsetsCodec)
        asked++
        req.answer(listOffsetsCodec, {
          throttleTimeMs: 0,
          topics: r.topics.map((t) => ({
            name: t.name,
            partitions: t.partitions.map((p) => ({
              partitionIndex: p.partitionIndex,
              errorCode: asked === 1 && p.partitionIndex === 1 ? ErrorCode.LEADER_NOT_AVAILABLE : 0,
              timestamp: -1n,
              offset: BigInt(10 + p.partitionIndex),
              leaderEpoch: 0,
            })),
          })),
        })
      },
    })
    admin = new Admin({ bootstrapServers: `127.0.0.1:${fake.port}`, 'retry.backoff.ms': 10 })
    const metadataBefore = () => count(ApiKey.Metadata)
    const all = await admin
      .listOffsets([
        { topic: 't', partition: 0, spec: 'latest' },
        { topic: 't', partition: 1, spec: 'latest' },
      ])
      .all()
    expect([...all].map(([k, v]) => [k, v.offset])).toEqual([
      ['t-0', 10n],
      ['t-1', 11n],
    ])
    expect(asked).toBe(2)
    expect(metadataBefore()).toBe(2)
  })

  it('an error that never clears fails the item with REQUEST_TIMED_OUT at the call timeout, naming it', async () => {
    fake = await startFakeKafka({
      apiVersions: API_VERSIONS,
      onRequest: (req) => {
        if (req.apiKey === ApiKey.FindCoordinator) return coordinator(req, fake!.port)
        const r = req.decode(deleteGroupsCodec)
        req.answer(deleteGroupsCodec, { throttleTimeMs: 0, results: r.groupsNames.map((groupId) => ({ groupId, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, errorMessage: null })) })
      },
    })
    admin = new Admin({ bootstrapServers: `127.0.0.1:${fake.port}`, 'retry.backoff.ms': 10, 'retry.backoff.max.ms': 50 })
    const err = await admin
      .deleteConsumerGroups(['g'], { timeoutMs: 500 })
      .all()
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaClientError)
    expect((err as KafkaClientError).code).toBe('REQUEST_TIMED_OUT')
    expect((err as KafkaClientError).message).toContain('COORDINATOR_LOAD_IN_PROGRESS')
    expect(count(ApiKey.DeleteGroups)).toBeGreaterThanOrEqual(2)
  })

  it('a broker not up yet is retried until it answers, within default.api.timeout.ms', async () => {
    const port = await freePort()
    admin = new Admin({ bootstrapServers: `127.0.0.1:${port}`, 'retry.backoff.ms': 20, 'reconnect.backoff.max.ms': 100 })
    const call = admin.describeCluster()
    await new Promise((resolve) => setTimeout(resolve, 400))
    fake = await startFakeKafka({
      apiVersions: API_VERSIONS,
      port,
      onRequest: (req) => {
        req.decode(describeClusterCodec)
        req.answer(describeClusterCodec, {
          throttleTimeMs: 0,
          errorCode: 0,
          errorMessage: null,
          endpointType: 1,
          clusterId: 'fake',
          controllerId: 0,
          brokers: [{ brokerId: 0, host: '127.0.0.1', port, rack: null, isFenced: false }],
          clusterAuthorizedOperations: -2147483648,
        })
      },
    })
    const cluster = await call
    expect(cluster).toMatchObject({ clusterId: 'fake', controller: { nodeId: 0, port }, nodes: [{ nodeId: 0, port }] })
  })
})

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}
