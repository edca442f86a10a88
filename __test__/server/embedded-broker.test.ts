/**
 * The broker as a library (`startBroker` from 'ferrolog'): an ephemeral port and a temporary
 * data dir removed on stop, real clients (kafkajs, @platformatic/kafka) against it, ten brokers
 * in one process, `await using`, and a process that embeds one exits by itself once it stops it.
 */
import { Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Kafka, logLevel } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { startBroker, type Broker } from '../../ts/index.js'
import { tempDir } from '../helpers/tmp.js'

function withTimeout<T>(what: string, promise: Promise<T>, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** Produces one record with kafkajs and reads it back in a consumer group. */
async function kafkajsRoundTrip(broker: Broker, topic: string, value: string): Promise<string> {
  const kafka = new Kafka({ clientId: `embedded-${topic}`, brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING })
  const producer = kafka.producer()
  await producer.connect()
  await producer.send({ topic, messages: [{ key: 'k', value }] })
  await producer.disconnect()
  const consumer = kafka.consumer({ groupId: `${topic}-group` })
  try {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    return await withTimeout(
      `kafkajs consumes ${topic}`,
      new Promise<string>((resolve) => {
        void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) })
      }),
    )
  } finally {
    await consumer.disconnect()
  }
}

describe('startBroker', () => {
  it('serves kafkajs and @platformatic/kafka on an ephemeral port, and removes its temporary data dir on stop', async () => {
    const broker = await startBroker({ port: 0 })
    const dataDir = broker.config.dataDir
    try {
      expect(broker.port).toBeGreaterThan(0)
      expect(broker.bootstrapServers).toBe(`127.0.0.1:${broker.port}`)
      expect(existsSync(dataDir)).toBe(true)

      expect(await kafkajsRoundTrip(broker, 'embedded-kafkajs', 'hello kafkajs')).toBe('hello kafkajs')

      const producer = new Producer({
        clientId: 'embedded-platformatic-producer',
        bootstrapBrokers: [broker.bootstrapServers],
        serializers: stringSerializers,
        autocreateTopics: true,
      })
      try {
        await producer.send({ messages: [{ topic: 'embedded-platformatic', key: 'k', value: 'hello platformatic' }] })
      } finally {
        await producer.close()
      }
      const consumer = new Consumer({
        clientId: 'embedded-platformatic-consumer',
        groupId: 'embedded-platformatic-group',
        bootstrapBrokers: [broker.bootstrapServers],
        deserializers: stringDeserializers,
        maxWaitTime: 200,
      })
      try {
        const stream = await consumer.consume({ topics: ['embedded-platformatic'], mode: 'earliest', autocommit: false })
        const value = await withTimeout(
          'platformatic consumes',
          (async () => {
            for await (const message of stream) return message.value
            throw new Error('the stream ended')
          })(),
        )
        await stream.close()
        expect(value).toBe('hello platformatic')
      } finally {
        await consumer.close(true)
      }
    } finally {
      await broker.stop()
    }
    expect(existsSync(dataDir)).toBe(false)
    await broker.stop() // idempotent
  })

  it('keeps a data dir the caller gave, and takes Kafka config names', async () => {
    const dataDir = tempDir('embedded-given-')
    const broker = await startBroker({ dataDir, config: { 'num.partitions': '3', 'log.segment.bytes': '1048576' } })
    try {
      expect(broker.config.numPartitions).toBe(3)
      expect(broker.config.logDefaults.segmentBytes).toBe(1_048_576)
      expect(await kafkajsRoundTrip(broker, 'kept', 'kept value')).toBe('kept value')
    } finally {
      await broker.stop()
    }
    expect(existsSync(join(dataDir, 'kept-0'))).toBe(true)
    // A second broker on that dir finds the topic, its record and the group's committed offset.
    const again = await startBroker({ dataDir })
    try {
      const admin = new Kafka({ brokers: [again.bootstrapServers], logLevel: logLevel.NOTHING }).admin()
      await admin.connect()
      const offsets = await admin.fetchTopicOffsets('kept').finally(() => admin.disconnect())
      expect(offsets.length).toBe(3)
      expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(1)
      expect(await kafkajsRoundTrip(again, 'kept', 'second value')).toBe('second value')
    } finally {
      await again.stop()
    }
  })

  it('writes to a pino-shaped logger, fields first', async () => {
    const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = []
    const at = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg })
    const broker = await startBroker({ logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } })
    await broker.stop()
    const started = lines.find((l) => l.msg === 'broker started')
    expect(started?.level).toBe('info')
    expect(started?.fields.listen).toBe(broker.bootstrapServers)
    expect(lines.some((l) => l.msg === 'broker stopped')).toBe(true)
  })

  it('runs ten brokers in one process, each serving its own round trip', async () => {
    const brokers = await Promise.all(Array.from({ length: 10 }, () => startBroker()))
    try {
      expect(new Set(brokers.map((b) => b.port)).size).toBe(10)
      expect(new Set(brokers.map((b) => b.config.dataDir)).size).toBe(10)
      const values = await Promise.all(brokers.map((b, i) => kafkajsRoundTrip(b, `ten-${i}`, `value ${i}`)))
      expect(values).toEqual(brokers.map((_, i) => `value ${i}`))
    } finally {
      await Promise.all(brokers.map((b) => b.stop()))
    }
    for (const b of brokers) expect(existsSync(b.config.dataDir)).toBe(false)
  })

  it('stops at the end of an `await using` scope', async () => {
    let dataDir: string
    let stopped: Broker
    {
      await using broker = await startBroker()
      dataDir = broker.config.dataDir
      stopped = broker
      expect(await kafkajsRoundTrip(broker, 'scoped', 'scoped value')).toBe('scoped value')
    }
    expect(existsSync(dataDir)).toBe(false)
    // Its port is closed.
    const kafka = new Kafka({ brokers: [`127.0.0.1:${stopped.port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 500 })
    await expect(kafka.admin().connect()).rejects.toThrow()
  })

  it('leaves nothing behind: a process that embeds a broker exits by itself once it stops it', async () => {
    const child = spawn(process.execPath, [join(__dirname, '../helpers/embedded-broker-child.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now() })))
    const stoppedAt = new Promise<number>((resolve) => child.stdout.on('data', () => stdout.includes('stopped\n') && resolve(Date.now())))
    try {
      const { code, at } = await withTimeout('the child exits', exited, 30_000)
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      expect(stdout).toContain('consumed=hello from the child')
      // Exited on its own, soon after stopping the broker: no open handle or timer kept it.
      expect(at - (await stoppedAt)).toBeLessThan(3000)
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    const dataDir = /dataDir=(.*)\n/.exec(stdout)![1]
    expect(existsSync(dataDir)).toBe(false)
  })
})
