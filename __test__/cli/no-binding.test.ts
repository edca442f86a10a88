/**
 * Without the native binding (hidden with FERROLOG_NATIVE=0, as if the .node file were missing)
 * the TypeScript engine serves: the broker on the js backend with copy transfer, a kafkajs round
 * trip through it, the CLI, and clear refusals of what needs the binding.
 */
import { join } from 'node:path'
import { Kafka, logLevel, Partitioners } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { spawnBroker } from '../helpers/broker-process.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

/** The built CLI (or node with other args) in a child whose environment hides the binding. */
function run(args: string[], input = '') {
  return new Promise<Awaited<ReturnType<typeof runProcess>>>((resolve, reject) => {
    const saved = process.env.FERROLOG_NATIVE
    process.env.FERROLOG_NATIVE = '0'
    runProcess(process.execPath, args, input, 60_000).then(resolve, reject)
    if (saved === undefined) delete process.env.FERROLOG_NATIVE
    else process.env.FERROLOG_NATIVE = saved
  })
}

describe('ferrolog without the native binding', () => {
  it('--version names the TypeScript engine', async () => {
    const r = await run([CLI, '--version'])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^ferrolog \d+\.\d+\.\d+ \(engine: js \(TypeScript, copy transfer; native binding not available: hidden by FERROLOG_NATIVE=0\)\)/)
  })

  it('refuses --backend native and zero-copy transfer, naming the cause', async () => {
    const native = await run([CLI, 'broker', '--data-dir', tempDir('ferrolog-nb-'), '--listen', '127.0.0.1:0', '--backend', 'native'])
    expect(native.status).toBe(1)
    expect(native.stderr).toContain('the native storage backend (--backend native) needs the native binding, which is not available (hidden by FERROLOG_NATIVE=0)')
    const zeroCopy = await run([CLI, 'broker', '--data-dir', tempDir('ferrolog-nb-'), '--listen', '127.0.0.1:0', '--transfer', 'zero-copy'])
    expect(zeroCopy.status).toBe(1)
    expect(zeroCopy.stderr).toContain('zero-copy transfer (transfer.mode=zero-copy) needs the native binding')
  })

  it('serves a kafkajs round trip, the CLI and dump-log on the TypeScript engine', { timeout: 120_000 }, async () => {
    const broker = await spawnBroker({ env: { FERROLOG_NATIVE: '0' } })
    try {
      const log = broker.stderr()
      expect(log).toContain('native binding not available: hidden by FERROLOG_NATIVE=0; using the TypeScript engine and copy transfer')
      expect(log).toMatch(/broker started.*js \(TypeScript\)/s)
      const kafka = new Kafka({ clientId: 'no-binding', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING })
      const admin = kafka.admin()
      await admin.connect()
      await admin.createTopics({ topics: [{ topic: 'nb', numPartitions: 1 }] })
      await admin.disconnect()
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
      await producer.connect()
      await producer.send({ topic: 'nb', messages: Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) })
      await producer.disconnect()
      const consumer = kafka.consumer({ groupId: 'nb-group' })
      await consumer.connect()
      await consumer.subscribe({ topic: 'nb', fromBeginning: true })
      const seen: string[] = []
      await new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.push(message.value!.toString())
            if (seen.length === 50) resolve()
          },
        })
      })
      await consumer.disconnect()
      expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => `v${i}`))

      const bootstrap = `127.0.0.1:${broker.port}`
      const p = await run([CLI, 'produce', '--bootstrap-server', bootstrap, '--topic', 'nb'], 'cli-1\ncli-2\n')
      expect(p.status).toBe(0)
      const c = await run([CLI, 'consume', '--bootstrap-server', bootstrap, '--topic', 'nb', '--offset', '50', '--exit-at-end', '--format', '%v'])
      expect(c.stdout.trim().split('\n')).toEqual(['cli-1', 'cli-2'])
      const t = await run([CLI, 'topics', '--bootstrap-server', bootstrap, 'list'])
      expect(t.stdout).toContain('nb')
      const d = await run([CLI, 'dump-log', join(broker.dataDir, 'nb-0', '00000000000000000000.log')])
      expect(d.status).toBe(0)
      expect(d.stdout).toContain('baseOffset')
    } finally {
      await broker.stop()
    }
  })

  it('LogManager.open defaults to the js backend and creates a log in a process without the binding', async () => {
    const script = `
      const { LogManager } = require(${JSON.stringify(join(__dirname, '../../dist/ts/index.js'))})
      ;(async () => {
        const m = await LogManager.open({ dataDir: ${JSON.stringify(tempDir('ferrolog-nb-lm-'))} })
        await m.getOrCreateLog('t', 0)
        console.log(m.backend.name)
        await m.close()
      })().catch((e) => { console.error(e); process.exit(1) })`
    const r = await run(['-e', script])
    expect(r.status).toBe(0)
    expect(r.stdout.trim()).toBe('js')
  })
})
