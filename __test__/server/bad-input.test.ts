/**
 * Malformed and random frames: the broker closes the offending connection (or answers it) and
 * stays up; no log is touched; afterwards a client still produces and consumes correctly.
 */
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { startBroker } from '../helpers/broker.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

/** A deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4)
  size.writeInt32BE(body.length)
  return Buffer.concat([size, body])
}

/** Sends bytes on a new connection; resolves with what came back when the socket closes or after `ms`. */
function exchange(port: number, bytes: Buffer, ms = 200): Promise<{ data: Buffer; closedByBroker: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let closedByBroker = false
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(bytes))
    socket.on('data', (d) => chunks.push(d))
    socket.on('error', () => undefined)
    socket.on('end', () => (closedByBroker = true))
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ data: Buffer.concat(chunks), closedByBroker })
    })
    const timer = setTimeout(() => socket.destroy(), ms)
  })
}

describe('bad input', () => {
  it('answers an unsupported ApiVersions version with UNSUPPORTED_VERSION in the v0 shape', async () => {
    broker = await startBroker()
    const w = new Writer().int16(18).int16(99).int32(7).nullableString('test')
    const { data } = await exchange(broker.port, frame(w.finish()))
    const r = new Reader(data, 4)
    expect(r.int32()).toBe(7)
    const response = apiVersionsCodec.decodeResponse(r, 0)
    expect(response.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION)
    expect(response.apiKeys).toEqual([{ apiKey: 18, minVersion: 0, maxVersion: 4 }])
  })

  it('closes connections that send oversized, negative, unknown or garbled requests, and stays up', async () => {
    broker = await startBroker({ props: { 'socket.request.max.bytes': '1000' } })
    const port = broker.port
    const oversized = Buffer.alloc(4)
    oversized.writeInt32BE(5000)
    const negative = Buffer.alloc(4)
    negative.writeInt32BE(-1)
    for (const bytes of [
      oversized,
      negative,
      frame(new Writer().int16(999).int16(0).int32(1).nullableString(null).finish()), // unknown ApiKey
      frame(new Writer().int16(3).int16(400).int32(1).nullableString(null).finish()), // unsupported Metadata version
      frame(new Writer().int16(0).int16(9).int32(1).nullableString(null).int8(0).int16(1).finish()), // truncated Produce
      // Produce v2: advertised (ApiVersions says v0, as Kafka 4.x) but refused, as Kafka refuses it.
      frame(new Writer().int16(0).int16(2).int32(1).nullableString(null).int16(1).int32(1000).int32(0).finish()),
    ]) {
      const { closedByBroker, data } = await exchange(port, bytes, 2000)
      expect(closedByBroker).toBe(true)
      expect(data.length).toBe(0)
    }
  })

  it('survives thousands of random frames: no log touched, and it still answers', async () => {
    broker = await startBroker()
    await broker.createTopic('safe', 1, {})
    const log = broker.logManager.getLog('safe', 0)!
    log.append([{ key: 'k', value: 'before' }])
    const random = prng(1234)
    const apiKeys = [0, 1, 2, 3, 18, 19]
    let sent = 0
    for (let connection = 0; connection < 40; connection++) {
      const frames: Buffer[] = []
      for (let i = 0; i < 100; i++) {
        const body = Buffer.alloc(10 + Math.floor(random() * 300))
        for (let b = 0; b < body.length; b++) body[b] = Math.floor(random() * 256)
        // Half the frames carry a real ApiKey and version so that decoding goes deep.
        if (random() < 0.5) {
          body.writeInt16BE(apiKeys[Math.floor(random() * apiKeys.length)], 0)
          body.writeInt16BE(Math.floor(random() * 13), 2)
        }
        frames.push(frame(body))
        sent++
      }
      await exchange(broker.port, Buffer.concat(frames), 50)
    }
    expect(sent).toBe(4000)
    // Nothing was appended by garbage (a random frame is vanishingly unlikely to hold a valid batch).
    expect(log.logEndOffset()).toBe(1n)
    log.append([{ key: 'k', value: 'after' }])
    expect(log.readRecords(0n).map((r) => r.value?.toString())).toEqual(['before', 'after'])
    // And the broker still answers a well-formed request.
    const w = new Writer().int16(18).int16(3).int32(42).nullableString('probe').taggedFields()
    apiVersionsCodec.encodeRequest(w, 3, { clientSoftwareName: 'probe', clientSoftwareVersion: '1' })
    const { data } = await exchange(broker.port, frame(w.finish()))
    const r = new Reader(data, 4)
    expect(r.int32()).toBe(42)
    expect(apiVersionsCodec.decodeResponse(r, 3).errorCode).toBe(ErrorCode.NONE)
  })
})
