/**
 * The Prometheus endpoint: a broker started with `metrics.listen` serves the counters of its
 * logs, connections, fetch purgatory, fetch sessions and groups on GET /metrics, in the text
 * format (HELP and TYPE lines, escaped labels); anything else is 404; stop closes it.
 */
import { spawn } from 'node:child_process'
import { request } from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { escapeLabelValue } from '../../ts/server/metrics.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'
import { runKcat } from '../helpers/kcat.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

const brokers: Broker[] = []
afterEach(async () => {
  await Promise.all(brokers.splice(0).map((b) => b.stop()))
})

async function start(props: Record<string, string> = { 'metrics.listen': '127.0.0.1:0' }): Promise<Broker> {
  const broker = await startBroker({ props })
  brokers.push(broker)
  return broker
}

function get(port: number, path: string, method = 'GET'): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body }))
    })
    req.on('error', reject)
    req.end()
  })
}

interface Family {
  help?: string
  type?: string
  samples: Map<string, number>
}

/** Parses the text format into families; a sample's key is its label set as written (`{a="b"}` or ''). */
function parse(text: string): Map<string, Family> {
  const families = new Map<string, Family>()
  const familyOf = (name: string) => families.get(name) ?? families.set(name, { samples: new Map() }).get(name)!
  for (const line of text.split('\n')) {
    if (line === '') continue
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line)
    if (meta) {
      familyOf(meta[2])[meta[1] === 'HELP' ? 'help' : 'type'] = meta[3]
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line)
    if (!sample) throw new Error(`not a sample line: ${line}`)
    familyOf(sample[1]).samples.set(sample[2] ?? '', Number(sample[3]))
  }
  return families
}

function value(families: Map<string, Family>, name: string, labels = ''): number | undefined {
  return families.get(name)?.samples.get(labels)
}

describe('metrics endpoint', () => {
  it('serves log offsets and sizes, connections, purgatory, session and group counts', async () => {
    const broker = await start()
    expect(broker.metricsPort).toBeGreaterThan(0)
    expect(broker.metricsPort).not.toBe(broker.port)
    await broker.createTopic('orders', 2, {})
    const produced = await runKcat(broker.port, ['-P', '-t', 'orders', '-p', '1', '-K', ':'], 'k1:a\nk2:bb\nk3:ccc\n')
    expect(produced.status, produced.stderr).toBe(0)
    const held = await connectTo(broker.port)
    try {
      await expect.poll(() => broker.connectionCount).toBe(1)
      const res = await get(broker.metricsPort, '/metrics')
      expect(res.status).toBe(200)
      expect(res.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
      const m = parse(res.body)

      for (const [name, f] of m) {
        expect(name.startsWith('ferrolog_'), name).toBe(true)
        expect(f.help, `${name} HELP`).toBeTruthy()
        expect(['gauge', 'counter'], `${name} TYPE`).toContain(f.type)
        if (f.type === 'counter') expect(name.endsWith('_total'), name).toBe(true)
      }
      expect(value(m, 'ferrolog_log_end_offset', '{topic="orders",partition="1"}')).toBe(3)
      expect(value(m, 'ferrolog_log_end_offset', '{topic="orders",partition="0"}')).toBe(0)
      expect(value(m, 'ferrolog_log_high_watermark', '{topic="orders",partition="1"}')).toBe(3)
      expect(value(m, 'ferrolog_log_start_offset', '{topic="orders",partition="1"}')).toBe(0)
      const size = broker.logManager
        .getLog('orders', 1)!
        .segments()
        .reduce((n, s) => n + s.size, 0)
      expect(size).toBeGreaterThan(0)
      expect(value(m, 'ferrolog_log_size_bytes', '{topic="orders",partition="1"}')).toBe(size)
      expect(value(m, 'ferrolog_log_size_bytes', '{topic="orders",partition="0"}')).toBe(0)
      expect(value(m, 'ferrolog_connections')).toBe(1)
      expect(value(m, 'ferrolog_delayed_fetch_parked')).toBe(0)
      expect(value(m, 'ferrolog_delayed_fetch_expired_total')).toBe(0)
      expect(value(m, 'ferrolog_fetch_sessions')).toBe(0)
      expect(value(m, 'ferrolog_fetch_session_evictions_total')).toBe(0)
      expect(m.get('ferrolog_groups')!.type).toBe('gauge')
      expect([...m.get('ferrolog_groups')!.samples.keys()]).toContain('{state="Stable"}')
      expect([...m.get('ferrolog_groups')!.samples.values()].every((n) => n === 0)).toBe(true)
    } finally {
      held.destroy()
    }
  })

  it('counts the record bytes Fetch responses carried to consumers', async () => {
    const broker = await start()
    await broker.createTopic('out', 1, {})
    const log = broker.logManager.getLog('out', 0)!
    log.append(buildBatch([{ value: 'a' }, { value: 'b' }]))
    const size = log.segments().reduce((sum, seg) => sum + seg.size, 0)
    const wire = new KafkaWire(await connectTo(broker.port), 'metrics-test')
    try {
      const partitions = [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1024 * 1024 }]
      for (let i = 0; i < 2; i++) await wire.send(fetchCodec, 12, fetchRequest({ maxWaitMs: 0, topics: [{ topic: 'out', topicId: ZERO_UUID, partitions }] }))
      const m = parse((await get(broker.metricsPort, '/metrics')).body)
      expect(value(m, 'ferrolog_bytes_out_total')).toBe(2 * size)
      expect(value(m, 'ferrolog_replication_bytes_out_total')).toBe(0)
    } finally {
      wire.close()
    }
  })

  it('counts a fetch session and a delayed fetch that expired', async () => {
    const broker = await start()
    await broker.createTopic('idle', 1, {})
    const wire = new KafkaWire(await connectTo(broker.port), 'metrics-test')
    try {
      const partitions = [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1024 * 1024 }]
      // A new session (epoch 0) that waits 50 ms for a byte on an empty partition: parked, then expired.
      const res = await wire.send(fetchCodec, 12, fetchRequest({ sessionEpoch: 0, maxWaitMs: 50, minBytes: 1, topics: [{ topic: 'idle', topicId: ZERO_UUID, partitions }] }))
      expect(res.sessionId).not.toBe(0)
      const m = parse((await get(broker.metricsPort, '/metrics')).body)
      expect(value(m, 'ferrolog_fetch_sessions')).toBe(1)
      expect(value(m, 'ferrolog_fetch_session_partitions_cached')).toBe(1)
      expect(value(m, 'ferrolog_fetch_sessions_created_total')).toBe(1)
      expect(value(m, 'ferrolog_delayed_fetch_parked')).toBe(0)
      expect(value(m, 'ferrolog_delayed_fetch_parked_total')).toBe(1)
      expect(value(m, 'ferrolog_delayed_fetch_expired_total')).toBe(1)
      expect(value(m, 'ferrolog_delayed_fetch_consumer_expired_total')).toBe(1)
      expect(value(m, 'ferrolog_delayed_fetch_follower_expired_total')).toBe(0)
    } finally {
      wire.close()
    }
  })

  it('answers 404 to other paths, 405 to other methods, and closes on stop', async () => {
    const broker = await start()
    const port = broker.metricsPort
    expect((await get(port, '/')).status).toBe(404)
    expect((await get(port, '/metrics/extra')).status).toBe(404)
    expect((await get(port, '/metrics', 'POST')).status).toBe(405)
    expect((await get(port, '/metrics?name[]=x')).status).toBe(200)
    await broker.stop()
    await expect(get(port, '/metrics')).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })

  it('is started by `ferrolog broker --metrics-listen`', async () => {
    const args = [CLI, 'broker', '--data-dir', tempDir(), '--listen', '127.0.0.1:0', '--metrics-listen', '127.0.0.1:0']
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        let out = ''
        const timer = setTimeout(() => reject(new Error(`no metrics line in 20 s: ${out}`)), 20_000)
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString()
          const m = /metrics on (http:\S+)/.exec(out)
          if (m) {
            clearTimeout(timer)
            resolve(new URL(m[1]))
          }
        })
      })
      expect(url.hostname).toBe('127.0.0.1')
      const res = await get(Number(url.port), url.pathname)
      expect(res.status).toBe(200)
      expect(value(parse(res.body), 'ferrolog_connections')).toBe(0)
    } finally {
      const closed = new Promise((resolve) => child.on('close', resolve))
      child.kill('SIGTERM')
      await closed
    }
  })

  it('fails to start, leaving no lock behind, when the metrics port is taken', async () => {
    const first = await start()
    const dataDir = tempDir()
    await expect(startBroker({ dataDir, props: { 'metrics.listen': `127.0.0.1:${first.metricsPort}` } })).rejects.toMatchObject({ code: 'EADDRINUSE' })
    brokers.push(await startBroker({ dataDir }))
  })

  it('is off unless metrics.listen is given', async () => {
    const broker = await start({})
    expect(broker.config.metricsListen).toBeUndefined()
    expect(broker.metricsPort).toBe(0)
  })

  it('escapes backslashes, quotes and line feeds in label values', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd')
  })
})
