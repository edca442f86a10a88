/**
 * `ferrolog topics` against a broker started by the test: create, list, describe (partitions and
 * the topic's own configs) and delete, in-process and as the built command.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { topicsCommand, UsageError } from '../../ts/cli/topics-command.js'
import { uuidToString } from '../../ts/storage/partition-metadata.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')
let broker: Broker

beforeEach(async () => {
  broker = await startBroker()
})
afterEach(async () => {
  await broker.stop()
})

async function run(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = []
  const code = await topicsCommand(['--bootstrap-server', `127.0.0.1:${broker.port}`, ...args], { out: (line) => lines.push(line) })
  return { code, lines }
}

describe('ferrolog topics', () => {
  it('creates, lists, describes and deletes topics', async () => {
    expect(await run('create', '--topic', 'orders', '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=60000', '--config', 'segment.bytes=1048576')).toEqual({
      code: 0,
      lines: ['Created topic orders.'],
    })
    expect(broker.topics.get('orders')).toMatchObject({ partitions: 3, configs: { 'retention.ms': '60000', 'segment.bytes': '1048576' } })
    await run('create', '--topic', 'audit')
    // As kafka-topics.sh: internal topics are listed unless --exclude-internal.
    expect((await run('list')).lines).toEqual(['__consumer_offsets', '__transaction_state', 'audit', 'orders'])
    expect((await run('list', '--exclude-internal')).lines).toEqual(['audit', 'orders'])

    const id = uuidToString(broker.topics.get('orders')!.topicId)
    expect((await run('describe', '--topic', 'orders')).lines).toEqual([
      `Topic: orders\tTopicId: ${id}\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=60000,segment.bytes=1048576`,
      '\tTopic: orders\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0',
      '\tTopic: orders\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0',
      '\tTopic: orders\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0',
    ])
    const heads = async (...args: string[]) => (await run('describe', ...args)).lines.filter((l) => l.startsWith('Topic:')).map((l) => l.split('\t')[0])
    expect(await heads()).toEqual(['Topic: __consumer_offsets', 'Topic: __transaction_state', 'Topic: audit', 'Topic: orders'])
    expect(await heads('--exclude-internal')).toEqual(['Topic: audit', 'Topic: orders'])

    expect(await run('delete', '--topic', 'orders')).toEqual({ code: 0, lines: ['Deleted topic orders.'] })
    expect((await run('list', '--exclude-internal')).lines).toEqual(['audit'])
  })

  it("reports the broker's refusals with Kafka's error names", async () => {
    await run('create', '--topic', 'dup')
    await expect(run('create', '--topic', 'dup')).rejects.toThrow(/TOPIC_ALREADY_EXISTS/)
    await expect(run('create', '--topic', 'bad', '--config', 'no.such.config=1')).rejects.toThrow(/INVALID_CONFIG/)
    await expect(run('delete', '--topic', 'missing')).rejects.toThrow(/UNKNOWN_TOPIC_OR_PARTITION/)
    await expect(run('describe', '--topic', 'missing')).rejects.toThrow(/UNKNOWN_TOPIC_OR_PARTITION/)
    await expect(run('create')).rejects.toBeInstanceOf(UsageError)
    await expect(topicsCommand(['list'])).rejects.toBeInstanceOf(UsageError)
  })

  it('runs as the built `ferrolog topics` command', async () => {
    const exec = (...args: string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, 'topics', '--bootstrap-server', `127.0.0.1:${broker.port}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
        let out = ''
        let err = ''
        child.stdout.on('data', (d: Buffer) => (out += d.toString()))
        child.stderr.on('data', (d: Buffer) => (err += d.toString()))
        child.on('close', (code) => resolve({ code, out, err }))
      })
    expect(await exec('create', '--topic', 'cli', '--partitions', '2')).toMatchObject({ code: 0, out: 'Created topic cli.\n' })
    expect(await exec('list', '--exclude-internal')).toMatchObject({ code: 0, out: 'cli\n' })
    expect(await exec('delete', '--topic', 'cli')).toMatchObject({ code: 0 })
    const refused = await exec('delete', '--topic', 'cli')
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('UNKNOWN_TOPIC_OR_PARTITION')
    expect((await exec('frobnicate')).code).toBe(2)
  })
})
