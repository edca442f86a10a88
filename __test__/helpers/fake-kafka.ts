/**
 * A small fake Kafka broker over a real socket on 127.0.0.1, for client tests: it answers
 * ApiVersions with the ranges it is given, Metadata with itself as broker 0 and each topic it is
 * given, and hands every other request to `onRequest`, which answers it (now or later) or not.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import { ApiKey } from '../../ts/protocol/apis/api.js'
import { apiVersionsCodec, type ApiVersion } from '../../ts/protocol/apis/api-versions.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { readRequestHeaderRest, readRequestHeaderStart, writeResponseHeader } from '../../ts/protocol/header.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'

export interface FakeRequest {
  apiKey: number
  apiVersion: number
  correlationId: number
  socket: Socket
  body: Reader
  /** Reads the rest of the header and decodes the body with `codec`. */
  decode<Req>(codec: ApiCodec<Req, unknown>): Req
  /** Writes the response with `codec` at the request's version. */
  answer<Res>(codec: ApiCodec<unknown, Res>, response: Res): void
}

export interface FakeKafka {
  port: number
  server: Server
  /** Every request header seen, in order (ApiVersions and Metadata included). */
  seen: Array<{ apiKey: number; apiVersion: number; correlationId: number }>
  connections: number
  close(): Promise<void>
}

export async function startFakeKafka(options: {
  apiVersions: ApiVersion[]
  topics?: Array<{ name: string; partitions: number; topicId?: Buffer }>
  onRequest?: (req: FakeRequest) => void
  port?: number
}): Promise<FakeKafka> {
  const sockets = new Set<Socket>()
  const fake: FakeKafka = { port: 0, server: undefined as unknown as Server, seen: [], connections: 0, close: async () => {} }
  const server = createServer((socket) => {
    fake.connections++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let buffered = Buffer.alloc(0)
    socket.on('data', (d) => {
      buffered = Buffer.concat([buffered, d])
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const frame = buffered.subarray(4, 4 + buffered.readInt32BE(0))
        buffered = buffered.subarray(4 + frame.length)
        const r = new Reader(frame)
        const head = readRequestHeaderStart(r)
        fake.seen.push(head)
        const codecFlexible = (codec: ApiCodec<unknown, unknown>) => head.apiVersion >= codec.flexibleFrom
        const answer = <Res>(codec: ApiCodec<unknown, Res>, response: Res) => {
          const w = new Writer()
          w.int32(0)
          writeResponseHeader(w, head.correlationId, codecFlexible(codec as ApiCodec<unknown, unknown>) && codec.apiKey !== ApiKey.ApiVersions)
          codec.encodeResponse(w, head.apiVersion, response)
          const out = w.finish()
          out.writeInt32BE(out.length - 4, 0)
          if (!socket.destroyed) socket.write(out)
        }
        if (head.apiKey === ApiKey.ApiVersions) {
          answer(apiVersionsCodec as ApiCodec<unknown, unknown>, {
            errorCode: 0,
            apiKeys: options.apiVersions,
            throttleTimeMs: 0,
            supportedFeatures: [],
            finalizedFeaturesEpoch: -1n,
            finalizedFeatures: [],
            zkMigrationReady: false,
          })
          continue
        }
        // Every other request the fake sees uses request header v1 or v2.
        const flexible = head.apiKey === ApiKey.Metadata ? head.apiVersion >= metadataCodec.flexibleFrom : false
        if (head.apiKey === ApiKey.Metadata) {
          readRequestHeaderRest(r, flexible)
          answer(metadataCodec as ApiCodec<unknown, unknown>, {
            throttleTimeMs: 0,
            brokers: [{ nodeId: 0, host: '127.0.0.1', port: fake.port, rack: null }],
            clusterId: 'fake',
            controllerId: 0,
            topics: (options.topics ?? []).map((t) => ({
              errorCode: 0,
              name: t.name,
              topicId: t.topicId ?? Buffer.alloc(16),
              isInternal: false,
              partitions: Array.from({ length: t.partitions }, (_, i) => ({
                errorCode: 0,
                partitionIndex: i,
                leaderId: 0,
                leaderEpoch: 0,
                replicaNodes: [0],
                isrNodes: [0],
                offlineReplicas: [],
              })),
              topicAuthorizedOperations: -2147483648,
            })),
            clusterAuthorizedOperations: -2147483648,
          })
          continue
        }
        const decode = <Req>(codec: ApiCodec<Req, unknown>): Req => {
          readRequestHeaderRest(r, head.apiVersion >= codec.flexibleFrom)
          return codec.decodeRequest(r, head.apiVersion)
        }
        options.onRequest?.({ ...head, socket, body: r, decode, answer })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  fake.port = (server.address() as AddressInfo).port
  fake.server = server
  fake.close = async () => {
    for (const s of sockets) s.destroy()
    await new Promise((resolve) => server.close(resolve))
  }
  return fake
}
