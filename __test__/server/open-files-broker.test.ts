/**
 * ferrolog issue #11 through the broker as an operator runs it: `ferrolog broker` under
 * `prlimit --nofile=256:256` over a data dir of 3,000 segments (20 partitions of 150 one-batch
 * segments) starts, holds descriptors for the active segments only, and serves every record
 * through Fetch (zero-copy, the default on Linux) to `ferrolog consume` (ferrolog's client
 * core), with log.max.open.segments=50 closing sealed segments as the reads go. Before, a start
 * needed three descriptors a segment (9,000) and failed on EMFILE.
 */
import { readdirSync } from 'node:fs'
import { get } from 'node:http'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { BackendName } from '../../ts/storage/backends.js'
import { startBroker } from '../helpers/broker.js'
import { spawnBroker } from '../helpers/broker-process.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')
const PARTITIONS = 20
const SEGMENTS = 150
const OPEN_FILE_LIMIT = 256
const BOUND = 50

const value = (p: number, o: number) => `partition ${p} offset ${o}`
const fdsOf = (pid: number) => readdirSync(`/proc/${pid}/fd`).length

/** A port free on 127.0.0.1 a moment ago (for the spawned broker's metrics listener). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A counter of the broker's GET /metrics. */
async function metric(port: number, name: string): Promise<number> {
  const body = await new Promise<string>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => resolve(text))
    }).on('error', reject)
  })
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(body)
  if (m === null) throw new Error(`no ${name} in /metrics`)
  return Number(m[1])
}

describe.each(['native', 'js'] as BackendName[])('a broker on the %s backend', (backend) => {
  it(`starts under RLIMIT_NOFILE ${OPEN_FILE_LIMIT} over ${PARTITIONS * SEGMENTS} segments and serves every record`, async () => {
    const dataDir = tempDir('ferrolog-open-files-broker-')
    // One partition of each internal topic (kept by the restart below): the 256 descriptors are
    // for the 20 partitions' segments, not for the 3 each of 50 + 50 internal partitions.
    const writer = await startBroker({ dataDir, backend, props: { 'offsets.topic.num.partitions': '1', 'transaction.state.log.num.partitions': '1' } })
    try {
      await writer.createTopic('many', PARTITIONS, { 'segment.bytes': '100', 'retention.ms': '-1' })
      for (let p = 0; p < PARTITIONS; p++) {
        const log = writer.logManager.getLog('many', p)!
        for (let o = 0; o < SEGMENTS; o++) log.append([{ key: 'k', value: value(p, o) }])
        expect(log.segments()).toHaveLength(SEGMENTS)
      }
    } finally {
      await writer.stop()
    }

    const metricsPort = await freePort()
    const spawnedAt = performance.now()
    const broker = await spawnBroker({
      backend,
      dataDir,
      openFileLimit: OPEN_FILE_LIMIT,
      props: { 'log.max.open.segments': String(BOUND), 'metrics.listen': `127.0.0.1:${metricsPort}`, 'transfer.mode': 'zero-copy' },
    })
    const startMs = performance.now() - spawnedAt
    try {
      const afterStart = fdsOf(broker.pid)
      console.log(`${backend} broker: ${PARTITIONS * SEGMENTS} segments, started in ${startMs.toFixed(0)} ms under nofile ${OPEN_FILE_LIMIT}, ${afterStart} descriptors`)
      // Three a partition (its active segment) and the process's own (node, listeners, lock).
      expect(afterStart).toBeLessThanOrEqual(3 * (PARTITIONS + 1) + 40)

      const out = await runProcess(
        process.execPath,
        [CLI, 'consume', '--bootstrap-server', `127.0.0.1:${broker.port}`, '--topic', 'many', '--offset', 'earliest', '--exit-at-end', '--format', '%p %o %v'],
        '',
        120_000,
      )
      expect({ status: out.status, stderr: out.stderr }).toEqual({ status: 0, stderr: '' })
      const lines = out.stdout.trim().split('\n')
      const expected: string[] = []
      for (let p = 0; p < PARTITIONS; p++) for (let o = 0; o < SEGMENTS; o++) expected.push(`${p} ${o} ${value(p, o)}`)
      expect(lines.sort()).toEqual(expected.sort())
      // Every record went out with sendfile from the segment files.
      expect(await metric(metricsPort, 'ferrolog_transfer_bytes_total')).toBeGreaterThan(PARTITIONS * SEGMENTS * 60)
      expect(await metric(metricsPort, 'ferrolog_transfer_failed_total')).toBe(0)
      const afterReads = fdsOf(broker.pid)
      console.log(`${backend} broker: after reading every segment under log.max.open.segments=${BOUND}: ${afterReads} descriptors`)
      expect(afterReads).toBeLessThanOrEqual(4 * (PARTITIONS + 1) + 2 * BOUND + 40)
    } finally {
      await broker.stop()
    }
    expect(broker.stderr()).not.toMatch(/EMFILE|too many open files/i)
  })
})
