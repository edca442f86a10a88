/**
 * Garbage in the files of a data directory (truncated, random bytes, empty, another version):
 * Kafka's checkpoints (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
 * leader-epoch-checkpoint) fall back with a warning, as Kafka's LogManager does, and every
 * record is still served; ferrolog's own files (ferrolog-topics.json, ferrolog-producer-ids.json,
 * partition.metadata) refuse the start with an error naming the file and what to do, the CLI
 * exits non-zero, and no file of the data directory is deleted. Both storage backends.
 */
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../../ts/logger.js'
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')
const TOPIC = 'kept'
const PARTITIONS = 2
const RECORDS = 5

function start(dataDir: string, backend: BackendName, warnings: string[] = []): Promise<Broker> {
  const logger = createLogger({
    level: 'warn',
    write: (line) => {
      const event = JSON.parse(line) as { level: string; msg: string; file?: string }
      if (event.level === 'warn') warnings.push(`${event.msg} ${event.file ?? ''}`)
    },
  })
  return Broker.start(brokerConfigFrom({ listeners: '127.0.0.1:0', 'log.dirs': dataDir }), { backend, logger })
}

/** A data dir with a topic of two partitions holding records, a producer id block, stopped cleanly. */
async function populated(backend: BackendName): Promise<string> {
  const dataDir = tempDir()
  const broker = await start(dataDir, backend)
  await broker.createTopic(TOPIC, PARTITIONS, { 'retention.ms': '-1' })
  for (let p = 0; p < PARTITIONS; p++) {
    const log = broker.logManager.getLog(TOPIC, p)!
    for (let i = 0; i < RECORDS; i++) log.append([{ key: `k${i}`, value: `p${p}-v${i}` }])
  }
  await broker.producerIds.generateProducerId()
  await broker.stop()
  return dataDir
}

function expectAllServed(broker: Broker): void {
  for (let p = 0; p < PARTITIONS; p++) {
    const log = broker.logManager.getLog(TOPIC, p)!
    expect(log.logStartOffset()).toBe(0n)
    expect(log.readRecords(0n).map((r) => r.value?.toString())).toEqual(Array.from({ length: RECORDS }, (_, i) => `p${p}-v${i}`))
  }
}

/** Every file of the data dir (but the lock) with its size. */
function files(dir: string): Record<string, number> {
  const out: Record<string, number> = {}
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name)
      if (e.isDirectory()) walk(path)
      else if (e.name !== '.lock') out[relative(dir, path)] = statSync(path).size
    }
  }
  walk(dir)
  return out
}

/** The four kinds of garbage, made from the file's good text. */
const GARBAGE: Record<string, (good: string, wrongVersion: string) => string | Buffer> = {
  truncated: (good) => good.slice(0, Math.floor(good.length / 2)),
  'random bytes': () => randomBytes(64),
  empty: () => '',
  'wrong version': (_good, wrongVersion) => wrongVersion,
}

describe.each(['native', 'js'] as const)('garbage in the files of a data dir (%s backend)', (backend) => {
  const checkpoints: Array<[string, string]> = [
    ['recovery-point-offset-checkpoint', `1\n1\n${TOPIC} 0 5\n`],
    ['log-start-offset-checkpoint', `1\n1\n${TOPIC} 0 0\n`],
    [join(`${TOPIC}-0`, 'leader-epoch-checkpoint'), '1\n1\n0 0\n'],
  ]
  it.each(checkpoints)('%s falls back with a warning, and every record is still served', async (name, wrongVersion) => {
    for (const [kind, make] of Object.entries(GARBAGE)) {
      const dataDir = await populated(backend)
      const file = join(dataDir, name)
      writeFileSync(file, make(readFileSync(file, 'utf8'), wrongVersion))
      const warnings: string[] = []
      const broker = await start(dataDir, backend, warnings).catch((err: Error) => {
        throw new Error(`${kind}: ${err.message}`)
      })
      try {
        if (!name.includes('leader-epoch')) expect(warnings.join('\n'), kind).toContain(file)
        expectAllServed(broker)
      } finally {
        await broker.stop()
      }
      // The next clean stop wrote a good checkpoint again.
      const again = await start(dataDir, backend)
      expectAllServed(again)
      await again.stop()
    }
  })

  it('an unclean stop with a garbage recovery point recovers every log in full', async () => {
    const dataDir = await populated(backend)
    rmSync(join(dataDir, '.kafka_cleanshutdown'))
    writeFileSync(join(dataDir, 'recovery-point-offset-checkpoint'), randomBytes(40))
    const warnings: string[] = []
    const broker = await start(dataDir, backend, warnings)
    try {
      expect(warnings.join('\n')).toContain('recovery-point-offset-checkpoint')
      expectAllServed(broker)
      expect(broker.logManager.getLog(TOPIC, 0)!.recoveryReport().segmentsRecovered).toBeGreaterThan(0)
    } finally {
      await broker.stop()
    }
  })

  const ownFiles: Array<[string, string, string]> = [
    ['ferrolog-topics.json', '{ "version": 2, "topics": [] }\n', 'not a valid topics file'],
    ['ferrolog-producer-ids.json', '{ "version": 2, "nextBlockStart": "1000" }\n', 'not a valid producer id file'],
    [join(`${TOPIC}-1`, 'partition.metadata'), 'version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n', 'not a valid partition.metadata file'],
  ]
  it.each(ownFiles)('%s refuses the start naming the file, and deletes nothing', async (name, wrongVersion, says) => {
    for (const [kind, make] of Object.entries(GARBAGE)) {
      const dataDir = await populated(backend)
      const file = join(dataDir, name)
      const garbage = make(readFileSync(file, 'utf8'), wrongVersion)
      writeFileSync(file, garbage)
      const before = files(dataDir)
      const refusal = await start(dataDir, backend).then(
        async (broker) => {
          await broker.stop()
          return new Error(`${kind}: started`)
        },
        (err: Error) => err,
      )
      expect(refusal.message, kind).toContain(file)
      expect(refusal.message, kind).toContain(says)
      expect(refusal.message, kind).toContain('No data was touched')
      expect(files(dataDir), kind).toEqual(before)
      expect(readFileSync(file)).toEqual(Buffer.from(garbage))
    }
  })

  it.each(ownFiles)('`ferrolog broker` exits non-zero on a garbage %s, naming it', async (name) => {
    const dataDir = await populated(backend)
    const file = join(dataDir, name)
    writeFileSync(file, randomBytes(64))
    const before = files(dataDir)
    const run = await runProcess(process.execPath, [CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--backend', backend], '', 20_000)
    expect(run.status).toBe(1)
    expect(run.stderr).toContain(file)
    expect(files(dataDir)).toEqual(before)
  })
})
