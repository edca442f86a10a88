/**
 * The broker as an operator runs it: `ferrolog broker` in its own process, a clean stop on
 * SIGTERM (clean-shutdown marker, lock released), a second broker on the same data dir refused,
 * and a restart that finds its topics and data again.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DataDirLockedError } from '../../ts/server/lock-file.js'
import { startBroker } from '../helpers/broker.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

describe('broker lifecycle', () => {
  it('refuses a second broker on the same data dir, and restarts with its topics and data', async () => {
    const dataDir = tempDir()
    const first = await startBroker({ dataDir })
    await first.createTopic('kept', 3, { 'retention.ms': '-1', 'segment.bytes': '1048576' })
    first.logManager.getLog('kept', 2)!.append([{ key: 'a', value: 'b' }])
    await expect(startBroker({ dataDir })).rejects.toBeInstanceOf(DataDirLockedError)
    const topicId = first.topics.get('kept')!.topicId
    await first.stop()
    expect(existsSync(join(dataDir, '.kafka_cleanshutdown'))).toBe(true)
    // The lock file stays (never deleted, as Kafka's); its pid is cleared and the lock is free.
    expect(readFileSync(join(dataDir, '.lock'), 'utf8')).toBe('')

    const second = await startBroker({ dataDir })
    try {
      const topic = second.topics.get('kept')!
      expect(topic.partitions).toBe(3)
      expect(topic.topicId).toEqual(topicId)
      expect(second.logManager.getLog('kept', 2)!.config.segmentBytes).toBe(1048576)
      expect(
        second.logManager
          .getLog('kept', 2)!
          .readRecords(0n)
          .map((r) => r.value?.toString()),
      ).toEqual(['b'])
    } finally {
      await second.stop()
    }
  })

  it('runs as `ferrolog broker` and stops cleanly on SIGTERM', async () => {
    const dataDir = tempDir()
    const child = spawn(process.execPath, [CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start in 20 s: ${err}`)), 20_000)
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('listening on')) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
    expect(readFileSync(join(dataDir, '.lock'), 'utf8')).toBe(`${child.pid}\n`)
    child.kill('SIGTERM')
    // 'close', not 'exit': stderr may still be flowing when the process has exited.
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])))
    expect({ code, signal, err: code === 0 ? '' : err }).toEqual({ code: 0, signal: null, err: '' })
    expect(err).toContain('broker stopped')
    expect(existsSync(join(dataDir, '.kafka_cleanshutdown'))).toBe(true)
    expect(readFileSync(join(dataDir, '.lock'), 'utf8')).toBe('')
  })
})
