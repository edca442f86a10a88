/**
 * connections.max.idle.ms: a connection with no reads, no writes and no request in flight for
 * that long is closed by the server's shared sweep, a partial frame that never completes
 * included; a connection that keeps talking, and one whose long-poll Fetch is parked for longer
 * than the limit, are kept.
 */
import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const IDLE_MS = 300

let broker: Broker | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await broker?.stop()
  broker = undefined
})

async function open(): Promise<Socket> {
  const socket = await connectTo(broker!.port)
  sockets.push(socket)
  return socket
}

/** Milliseconds until the server closes `socket` (rejects after `withinMs`). */
function closedAfter(socket: Socket, withinMs: number): Promise<number> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return resolve(0)
    const timer = setTimeout(() => reject(new Error(`still open after ${withinMs} ms`)), withinMs)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(performance.now() - t0)
    })
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('connections.max.idle.ms', () => {
  it("defaults to Kafka's 600000 and is read from the broker config", () => {
    expect(brokerConfigFrom({}).connectionsMaxIdleMs).toBe(600_000)
    expect(brokerConfigFrom({ 'connections.max.idle.ms': '-1' }).connectionsMaxIdleMs).toBe(-1)
    expect(() => brokerConfigFrom({ 'connections.max.idle.ms': 'soon' })).toThrow(/connections.max.idle.ms/)
  })

  it('closes an idle connection and one stuck mid-frame, keeps an active one and a parked long poll', async () => {
    broker = await startBroker({ props: { 'connections.max.idle.ms': String(IDLE_MS) } })
    await broker.createTopic('quiet', 1, {})

    const idle = await open()
    const idleClosed = closedAfter(idle, 5000)

    const stuck = await open()
    const stuckClosed = closedAfter(stuck, 5000)
    // A frame announcing 100 bytes, of which 10 come, then nothing.
    const partial = Buffer.alloc(14)
    partial.writeInt32BE(100, 0)
    stuck.write(partial)

    const active = new KafkaWire(await open(), 'active')
    const longPoll = new KafkaWire(await open(), 'long-poll')
    await longPoll.send(apiVersionsCodec, 2, { clientSoftwareName: '', clientSoftwareVersion: '' })
    const t0 = performance.now()
    const parked = longPoll
      .send(
        fetchCodec,
        12,
        fetchRequest({
          maxWaitMs: 4 * IDLE_MS,
          minBytes: 1,
          topics: [
            {
              topic: 'quiet',
              topicId: Buffer.alloc(16),
              partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }],
            },
          ],
        }),
      )
      .then((res) => ({ res, ms: performance.now() - t0, cut: longPoll.socket.destroyed }))
    let activeCount = 0
    while (performance.now() - t0 < 5 * IDLE_MS) {
      await active.send(apiVersionsCodec, 2, { clientSoftwareName: '', clientSoftwareVersion: '' })
      activeCount++
      await sleep(IDLE_MS / 3)
    }

    const [idleMs, stuckMs] = await Promise.all([idleClosed, stuckClosed])
    expect(idleMs).toBeGreaterThanOrEqual(IDLE_MS - 5)
    expect(stuckMs).toBeGreaterThanOrEqual(IDLE_MS - 5)
    // Parked for four times the limit, answered on a connection still open.
    const fetched = await parked
    expect(fetched.ms).toBeGreaterThanOrEqual(4 * IDLE_MS - 50)
    expect(fetched.res.responses[0].partitions[0].errorCode).toBe(0)
    expect(fetched.cut).toBe(false)
    expect(active.socket.destroyed).toBe(false)
    expect(activeCount).toBeGreaterThan(5)
    // Once quiet, both go too.
    await Promise.all([closedAfter(active.socket, 5000), closedAfter(longPoll.socket, 5000)])
  })

  it("keeps a connection whose request came while the broker's event loop stalled", async () => {
    broker = await startBroker({ props: { 'connections.max.idle.ms': String(IDLE_MS) } })
    const wire = new KafkaWire(await open(), 'stalled')
    await wire.send(apiVersionsCodec, 2, { clientSoftwareName: '', clientSoftwareVersion: '' })
    // Quiet for most of the limit, then a request goes out and the whole process (broker
    // included) stalls past the limit before it can read it: the stall is the broker's, not an
    // idle client's.
    await sleep(IDLE_MS * 0.8)
    // Stall in the check phase: once it ends, the event loop's next phase with work is the
    // timers' (the idle sweep), before the poll phase that would read the request.
    await new Promise((resolve) => setImmediate(resolve))
    const answered = wire.send(apiVersionsCodec, 2, { clientSoftwareName: '', clientSoftwareVersion: '' })
    const stallUntil = performance.now() + 3 * IDLE_MS
    while (performance.now() < stallUntil) {
      // busy: no timer, no I/O
    }
    const res = await answered
    expect(res.errorCode).toBe(0)
    await sleep(IDLE_MS / 2)
    expect(wire.socket.destroyed).toBe(false)
    // And it is still closed once really idle.
    await closedAfter(wire.socket, 5000)
  })
})
