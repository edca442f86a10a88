import { spawnSync } from 'node:child_process'
import { copyFileSync, openSync, writeSync, closeSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')
const SEGMENT = join(__dirname, '../fixtures/kafka/fixture-0/00000000000000000000.log')

function run(...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' })
}

describe('ferrolog dump-log', () => {
  it("lists a Kafka-written segment's batches and records, all valid", () => {
    const r = run('dump-log', '--records', SEGMENT)
    expect(r.status).toBe(0)
    const batches = r.stdout.split('\n').filter((l) => l.startsWith('baseOffset: '))
    expect(batches.length).toBeGreaterThan(5)
    expect(batches.every((l) => l.endsWith('isvalid: true'))).toBe(true)
    expect(batches[0]).toMatch(/^baseOffset: 0 lastOffset: 0 count: 1 .* position: 0 CreateTime: 1700000000000 size: 116 magic: 2 compresscodec: none/)
    expect(r.stdout).toContain('| offset: 0 timestamp: 1700000000000 keySize: 9 valueSize: 39 headerKeys: [] key: key-00000')
  })

  it('reports a damaged batch and a partial tail with exit code 1, without crashing', () => {
    const copy = join(tempDir(), '00000000000000000000.log')
    copyFileSync(SEGMENT, copy)
    const fd = openSync(copy, 'r+')
    writeSync(fd, Buffer.from([0xff, 0xff]), 0, 2, 100) // inside the first batch's CRC range
    writeSync(fd, Buffer.alloc(30, 0x11), 0, 30, statSync(copy).size) // a partial trailing batch
    closeSync(fd)
    const r = run('dump-log', copy)
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^baseOffset: 0 .*isvalid: false$/m)
    expect(r.stdout).toContain('Found 30 invalid bytes at the end of 00000000000000000000.log')
  })

  it('explains its usage', () => {
    expect(run('dump-log').status).toBe(2)
    expect(run('nonsense').stderr).toContain('unknown command')
  })
})
