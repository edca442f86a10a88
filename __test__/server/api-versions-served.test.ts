/**
 * ApiVersions lists exactly what the broker serves: the ApiKeys whose handlers are registered
 * (ts/server/handlers/index.ts), each with its served codec's version range, and nothing else. A
 * generated codec existing (ts/protocol/messages knows every ApiKey of Kafka 4.4) is not serving.
 */
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { API_MESSAGE_TYPES } from '../../ts/protocol/messages/api-message-type.js'
import { readResponseHeader, writeRequestHeader } from '../../ts/protocol/header.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'
import type { Broker } from '../../ts/server/broker.js'
import { registerHandlers } from '../../ts/server/handlers/index.js'
import type { KafkaApis } from '../../ts/server/kafka-apis.js'
import { startBroker } from '../helpers/broker.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

/** One ApiVersions v3 request on a real connection; its answer. */
function askApiVersions(port: number): Promise<{ correlationId: number; response: ReturnType<typeof apiVersionsCodec.decodeResponse> }> {
  const w = new Writer()
  writeRequestHeader(w, { apiKey: apiVersionsCodec.apiKey, apiVersion: 3, correlationId: 5, clientId: 'served-test' }, true)
  apiVersionsCodec.encodeRequest(w, 3, { clientSoftwareName: 'served-test', clientSoftwareVersion: '1' })
  const body = Buffer.from(w.finish())
  const size = Buffer.alloc(4)
  size.writeInt32BE(body.length)
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0)
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(Buffer.concat([size, body])))
    const timer = setTimeout(() => socket.destroy(new Error('no ApiVersions answer in 5 s')), 5000)
    socket.on('error', (err) => (clearTimeout(timer), reject(err)))
    socket.on('data', (d) => {
      data = Buffer.concat([data, d])
      if (data.length < 4 || data.length < 4 + data.readInt32BE(0)) return
      clearTimeout(timer)
      socket.destroy()
      try {
        const r = new Reader(data.subarray(4, 4 + data.readInt32BE(0)))
        const correlationId = readResponseHeader(r, false) // ApiVersions answers with header v0
        resolve({ correlationId, response: apiVersionsCodec.decodeResponse(r, 3) })
      } catch (err) {
        reject(err as Error)
      }
    })
  })
}

describe('ApiVersions', () => {
  it('advertises exactly the registered handlers with their served version ranges, and no ApiKey that only has a generated codec', async () => {
    broker = await startBroker()
    const registered: Array<ApiCodec<unknown, unknown>> = []
    const recorder = {
      register(codec: ApiCodec<unknown, unknown>) {
        registered.push(codec)
        return recorder
      },
    }
    registerHandlers(broker, recorder as unknown as KafkaApis)
    const expected = registered.map((c) => ({ apiKey: c.apiKey, minVersion: c.minVersion, maxVersion: c.maxVersion })).sort((a, b) => a.apiKey - b.apiKey)
    // Produce is advertised from v0 as Kafka 4.x (ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION);
    // its codec serves v3 up, and a lower version closes the connection (bad-input.test.ts).
    const produce = expected.find((c) => c.apiKey === 0)!
    expect(produce.minVersion).toBe(3)
    produce.minVersion = 0

    const { correlationId, response: answer } = await askApiVersions(broker.port)
    expect(correlationId).toBe(5)
    expect(answer.errorCode).toBe(0)
    expect(answer.apiKeys.map((k) => ({ apiKey: k.apiKey, minVersion: k.minVersion, maxVersion: k.maxVersion }))).toEqual(expected)
    expect(new Set(expected.map((k) => k.apiKey)).size).toBe(expected.length)

    // KIP-848's ApiKeys at the versions Kafka 4.4 serves (issue 27 item 1).
    expect(answer.apiKeys).toContainEqual({ apiKey: 68, minVersion: 0, maxVersion: 1 }) // ConsumerGroupHeartbeat
    expect(answer.apiKeys).toContainEqual({ apiKey: 69, minVersion: 0, maxVersion: 1 }) // ConsumerGroupDescribe
    // The reassignment ApiKeys at Kafka 4.4's versions (issue 29 item 5).
    expect(answer.apiKeys).toContainEqual({ apiKey: 45, minVersion: 0, maxVersion: 1 }) // AlterPartitionReassignments
    expect(answer.apiKeys).toContainEqual({ apiKey: 46, minVersion: 0, maxVersion: 0 }) // ListPartitionReassignments

    // Kafka 4.4 defines many more ApiKeys than ferrolog serves; none of the others is advertised.
    const generatedOnly = API_MESSAGE_TYPES.map((t) => t.apiKey).filter((k) => !expected.some((e) => e.apiKey === k))
    expect(generatedOnly.length).toBeGreaterThan(0)
    expect(answer.apiKeys.filter((k) => generatedOnly.includes(k.apiKey))).toEqual([])
  })
})
