/**
 * kcat (librdkafka, from Debian) against a ferrolog broker started by the test: metadata,
 * producing with keys and headers, consuming to the end, data compared exactly.
 */
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { runKcat } from '../helpers/kcat.js'

let broker: Broker | undefined

afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

/** Runs kcat against the broker (asynchronously: the broker shares this process's event loop). */
const run = (args: string[], input?: string) => runKcat(broker!.port, args, input)

async function kcat(args: string[], input?: string): Promise<string> {
  const r = await run(args, input)
  if (r.status !== 0) throw new Error(`kcat ${args.join(' ')} exited with ${r.status}: ${r.stderr}`)
  return r.stdout
}

describe('kcat', () => {
  it('lists metadata, produces with keys and headers, and consumes exactly what it produced', async () => {
    broker = await startBroker()
    const lines = Array.from({ length: 50 }, (_, i) => `key-${i}:value ${i} ${'x'.repeat(i)}`)
    await kcat(['-P', '-t', 'orders', '-K', ':', '-H', 'source=kcat', '-z', 'lz4'], lines.join('\n') + '\n')
    await kcat(['-P', '-t', 'orders', '-K', ':', '-z', 'gzip'], 'late:last one\n')

    const metadata = await kcat(['-L', '-t', 'orders'])
    expect(metadata).toContain(`broker ${broker.config.nodeId} at 127.0.0.1:${broker.port}`)
    expect(metadata).toContain('topic "orders" with 1 partitions')

    const consumed = (await kcat(['-C', '-t', 'orders', '-o', 'beginning', '-e', '-f', '%p|%o|%k|%s|%h|%T\\n'])).split('\n').filter((l) => l.length > 0)
    expect(consumed).toHaveLength(51)
    consumed.slice(0, 50).forEach((line, i) => {
      const [partition, offset, key, value, headers, timestamp] = line.split('|')
      expect([partition, offset, key, value, headers]).toEqual(['0', String(i), `key-${i}`, `value ${i} ${'x'.repeat(i)}`, 'source=kcat'])
      expect(Number(timestamp)).toBeGreaterThan(Date.now() - 60_000)
    })
    expect(consumed[50].split('|').slice(0, 4)).toEqual(['0', '50', 'late', 'last one'])

    // What is on disk is what kcat sent: the log holds the same records.
    const records = broker.logManager.getLog('orders', 0)!.readRecords(0n, { maxBytes: 1 << 20 })
    expect(records.map((r) => r.value?.toString())).toEqual([...lines.map((l) => l.slice(l.indexOf(':') + 1)), 'last one'])
  })

  it('reads from an offset and by timestamp, and sees no data from an empty topic', async () => {
    broker = await startBroker()
    await kcat(['-P', '-t', 'ts', '-K', ':'], Array.from({ length: 10 }, (_, i) => `k${i}:v${i}`).join('\n') + '\n')
    const fromFive = (await kcat(['-C', '-t', 'ts', '-o', '5', '-e', '-f', '%o:%s\\n'])).trim().split('\n')
    expect(fromFive).toEqual(['5:v5', '6:v6', '7:v7', '8:v8', '9:v9'])
    const tail = (await kcat(['-C', '-t', 'ts', '-o', '-2', '-e', '-f', '%o:%s\\n'])).trim().split('\n')
    expect(tail).toEqual(['8:v8', '9:v9'])
    await broker.createTopic('empty', 2, {})
    const none = await run(['-C', '-t', 'empty', '-o', 'beginning', '-e', '-q'])
    expect(none.status).toBe(0)
    expect(none.stdout).toBe('')
  })

  it('still produces and consumes after thousands of random and malformed frames', async () => {
    broker = await startBroker()
    let seed = 99
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed / 0x80000000
    }
    for (let connection = 0; connection < 30; connection++) {
      const frames: Buffer[] = []
      for (let i = 0; i < 100; i++) {
        const body = Buffer.alloc(10 + Math.floor(random() * 200))
        for (let b = 0; b < body.length; b++) body[b] = Math.floor(random() * 256)
        if (random() < 0.5) body.writeInt16BE([0, 1, 2, 3, 8, 11, 18, 19][Math.floor(random() * 8)], 0)
        const size = Buffer.alloc(4)
        size.writeInt32BE(body.length)
        frames.push(size, body)
      }
      await new Promise<void>((resolve) => {
        const socket = connect(broker!.port, '127.0.0.1', () => socket.end(Buffer.concat(frames)))
        socket.on('error', () => undefined)
        socket.on('close', () => resolve())
        socket.resume()
        setTimeout(() => socket.destroy(), 500)
      })
    }
    await kcat(['-P', '-t', 'after-noise', '-K', ':'], 'a:1\nb:2\nc:3\n')
    const consumed = (await kcat(['-C', '-t', 'after-noise', '-o', 'beginning', '-e', '-f', '%o %k %s\\n'])).trim().split('\n')
    expect(consumed).toEqual(['0 a 1', '1 b 2', '2 c 3'])
  })
})
