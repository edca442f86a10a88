/**
 * `ferrolog produce` streams standard input: lines are sent while the input is still open (the
 * command used to read it all first), and a large input goes through in bounded memory, paced by
 * the Producer's buffer.memory.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import { createTopic, readAll } from '../client/producer-scenarios.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

let broker: Broker

beforeAll(async () => {
  broker = await startBroker()
})

afterAll(async () => {
  await broker?.stop()
})

describe('ferrolog produce streams standard input', () => {
  it('sends lines while standard input is still open', { timeout: 60_000 }, async () => {
    await createTopic(broker.bootstrapServers, 'streamed', 1)
    const child = spawn(process.execPath, [CLI, 'produce', '--bootstrap-server', broker.bootstrapServers, '--topic', 'streamed'], { stdio: ['pipe', 'pipe', 'pipe'] })
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    try {
      child.stdin.write('first\nsecond\n')
      // read back while the producer's input is open
      const early = await readAll(broker.bootstrapServers, 'streamed', 1, 2)
      expect(early.map((r) => r.value?.toString())).toEqual(['first', 'second'])
      child.stdin.end('third\n')
      expect(await exited).toBe(0)
    } finally {
      child.kill()
    }
    const all = await readAll(broker.bootstrapServers, 'streamed', 1, 3)
    expect(all.map((r) => r.value?.toString())).toEqual(['first', 'second', 'third'])
  })

  it('200k lines arrive in order', { timeout: 120_000 }, async () => {
    await createTopic(broker.bootstrapServers, 'streamed-many', 1)
    const child = spawn(process.execPath, [CLI, 'produce', '--bootstrap-server', broker.bootstrapServers, '--topic', 'streamed-many', '--compression', 'lz4'], { stdio: ['pipe', 'pipe', 'pipe'] })
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    const count = 200_000
    for (let from = 0; from < count; from += 10_000) {
      const chunk = Array.from({ length: 10_000 }, (_, i) => `line-${from + i}`.padEnd(100, '.')).join('\n') + '\n'
      if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve))
    }
    child.stdin.end()
    expect(await exited).toBe(0)
    const all = await readAll(broker.bootstrapServers, 'streamed-many', 1, count)
    expect(all.length).toBe(count)
    all.forEach((r, i) => expect(r.value?.toString().startsWith(`line-${i}.`)).toBe(true))
  })
})
