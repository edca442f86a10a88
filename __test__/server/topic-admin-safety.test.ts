/**
 * Topic metadata under load and abuse: requests pipelined on one connection take effect in
 * their order (Kafka handles one request of a connection at a time); creations and deletions on
 * many connections at once leave ferrolog-topics.json and the data directory consistent; a
 * deleted topic's records never come back under a topic created later with its name; a
 * CreateTopics asking for more partitions than the bounds is refused at once with nothing
 * recorded; a creation that fails midway leaves nothing behind; a start out of file descriptors
 * says how many it needs. Every case restarts the broker on the same data directory and checks
 * that it starts and serves.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { createPartitionsCodec } from '../../ts/protocol/apis/create-partitions.js'
import { createTopicsCodec, type CreateTopicsResponse } from '../../ts/protocol/apis/create-topics.js'
import { deleteTopicsCodec, type DeleteTopicsResponse } from '../../ts/protocol/apis/delete-topics.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { writePartitionMetadata } from '../../ts/storage/partition-metadata.js'
import { startBroker } from '../helpers/broker.js'
import { runProcess } from '../helpers/process.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'
import { expectConsistent, partitionDirs, storedTopics } from '../helpers/topic-dirs.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')
const CREATE_VERSION = 7
const DELETE_VERSION = 6
const METADATA_VERSION = 12

/** A connection whose requests fail (instead of hanging) when the broker closes it. */
class Wire extends KafkaWire {
  private readonly closed: Promise<never>

  constructor(socket: import('node:net').Socket) {
    super(socket, 'topic-admin-safety')
    this.closed = new Promise((_, reject) => socket.once('close', () => reject(new Error('the broker closed the connection without an answer'))))
    this.closed.catch(() => undefined)
  }

  static async open(port: number): Promise<Wire> {
    const wire = new Wire(await connectTo(port))
    wires.push(wire)
    return wire
  }

  request<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req): Promise<Res> {
    return Promise.race([this.send(codec, version, request), this.closed])
  }

  create(name: string, numPartitions = 1): Promise<CreateTopicsResponse> {
    return this.request(createTopicsCodec, CREATE_VERSION, {
      topics: [{ name, numPartitions, replicationFactor: -1, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    })
  }

  delete(name: string): Promise<DeleteTopicsResponse> {
    return this.request(deleteTopicsCodec, DELETE_VERSION, { topics: [{ name, topicId: ZERO_UUID }], topicNames: [], timeoutMs: 5000 })
  }

  metadata(names: string[], allowAutoTopicCreation = true) {
    return this.request(metadataCodec, METADATA_VERSION, {
      topics: names.map((name) => ({ name, topicId: ZERO_UUID })),
      allowAutoTopicCreation,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    })
  }

  produce(topic: string, ...values: string[]) {
    return this.request(produceCodec, 9, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch(values.map((value) => ({ value }))) }] }],
    })
  }
}

let broker: Broker | undefined
const wires: Wire[] = []
afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  await broker?.stop()
  broker = undefined
})

/** Stops the broker, starts a new one on its data directory, and checks it serves every stored topic. */
async function restart(dataDir: string, backend: BackendName = 'native', props: Record<string, string> = {}): Promise<Broker> {
  await broker?.stop()
  broker = await startBroker({ dataDir, backend, props })
  const wire = await Wire.open(broker.port)
  const names = [...storedTopics(dataDir).keys()]
  const metadata = await wire.metadata(names, false)
  expect(metadata.topics.map((t) => [t.name, t.errorCode])).toEqual(names.map((n) => [n, ErrorCode.NONE]))
  return broker
}

describe('requests pipelined on one connection', () => {
  it('take effect in their order and are all answered, in order', async () => {
    const dataDir = tempDir('ferrolog-pipeline-')
    broker = await startBroker({ dataDir })
    const wire = await Wire.open(broker.port)
    // Written back to back, before any answer: CreateTopics a, b, c, DeleteTopics a, CreateTopics
    // a again, DeleteTopics b.
    const answers = await Promise.all([wire.create('a', 3), wire.create('b', 2), wire.create('c', 1), wire.delete('a'), wire.create('a', 2), wire.delete('b')])
    const [createA, createB, createC, deleteA, recreateA, deleteB] = answers as [
      CreateTopicsResponse,
      CreateTopicsResponse,
      CreateTopicsResponse,
      DeleteTopicsResponse,
      CreateTopicsResponse,
      DeleteTopicsResponse,
    ]
    for (const r of [createA, createB, createC, recreateA]) expect(r.topics[0].errorCode).toBe(ErrorCode.NONE)
    for (const r of [deleteA, deleteB]) expect(r.responses[0].errorCode).toBe(ErrorCode.NONE)
    // The deletion named the first a's id; the second a is another topic.
    expect(deleteA.responses[0].topicId).toEqual(createA.topics[0].topicId)
    expect(recreateA.topics[0].topicId).not.toEqual(createA.topics[0].topicId)
    expect(recreateA.topics[0].numPartitions).toBe(2)
    expect([...storedTopics(dataDir).keys()].sort()).toEqual(['a', 'c'])
    expect(storedTopics(dataDir).get('a')![1]).toBe(2)
    expectConsistent(dataDir)
    await restart(dataDir)
    expect(broker!.topics.get('a')!.topicId).toEqual(recreateA.topics[0].topicId)
    expectConsistent(dataDir)
  })

  it("a parked Fetch holds the connection's next request, as Kafka's muted channel does", async () => {
    broker = await startBroker()
    await broker.createTopic('parked', 1, {})
    const wire = await Wire.open(broker.port)
    const started = Date.now()
    const fetch = wire.request(
      fetchCodec,
      12,
      fetchRequest({
        maxWaitMs: 400,
        minBytes: 1,
        topics: [
          { topic: 'parked', topicId: ZERO_UUID, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] },
        ],
      }),
    )
    const produce = wire.produce('parked', 'after the fetch')
    const fetched = await fetch
    // The Produce ran after the Fetch was answered: the Fetch waited its maxWaitMs and found nothing.
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
    expect(fetched.responses[0].partitions[0].records?.length ?? 0).toBe(0)
    expect((await produce).responses[0].partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n })
  })
})

describe('topic changes from many connections at once', () => {
  for (const backend of ['native', 'js'] as const) {
    it(`30 auto-creations, creations and deletions leave a store and data directory that agree (${backend})`, async () => {
      const dataDir = tempDir('ferrolog-concurrent-')
      broker = await startBroker({ dataDir, backend })
      for (let i = 0; i < 10; i++) await broker.createTopic(`old-${i}`, 2, {})
      const connections = await Promise.all(Array.from({ length: 30 }, () => Wire.open(broker!.port)))
      const results = await Promise.allSettled(
        connections.flatMap((wire, i) => [
          wire.metadata([`auto-${i}`]),
          i < 10 ? wire.delete(`old-${i}`) : wire.create(`made-${i}`, 2),
          i < 10 ? wire.create(`old-${i}`, 1) : wire.metadata([`auto-${i}`, `auto-${(i + 1) % 30}`]),
        ]),
      )
      // Every request answered: no connection closed.
      expect(results.filter((r) => r.status === 'rejected')).toEqual([])
      const names = [...storedTopics(dataDir).keys()].sort()
      const expected = [...Array.from({ length: 30 }, (_, i) => `auto-${i}`), ...Array.from({ length: 20 }, (_, i) => `made-${i + 10}`), ...Array.from({ length: 10 }, (_, i) => `old-${i}`)].sort()
      expect(names).toEqual(expected)
      // Each old-i was deleted, then created again with one partition, on the same connection.
      for (let i = 0; i < 10; i++) expect(storedTopics(dataDir).get(`old-${i}`)![1]).toBe(1)
      expectConsistent(dataDir)
      await restart(dataDir, backend)
      expectConsistent(dataDir)
    })
  }

  it('a topic created again after a deletion starts empty, whatever ran beside the deletion', async () => {
    const dataDir = tempDir('ferrolog-reappear-')
    broker = await startBroker({ dataDir })
    const wire = await Wire.open(broker.port)
    const others = await Promise.all(Array.from({ length: 8 }, () => Wire.open(broker!.port)))
    for (let round = 0; round < 5; round++) {
      expect((await wire.create('kept-name')).topics[0].errorCode).toBe(ErrorCode.NONE)
      expect((await wire.produce('kept-name', 'old-1', 'old-2')).responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE)
      const [deleted] = await Promise.all([wire.delete('kept-name'), ...others.map((o, i) => o.create(`beside-${round}-${i}`))])
      expect(deleted.responses[0].errorCode).toBe(ErrorCode.NONE)
      expect(partitionDirs(dataDir)).not.toContain('kept-name-0')
      expect((await wire.create('kept-name')).topics[0].errorCode).toBe(ErrorCode.NONE)
      expect(broker.logManager.getLog('kept-name', 0)!.logEndOffset()).toBe(0n)
      expect((await wire.delete('kept-name')).responses[0].errorCode).toBe(ErrorCode.NONE)
    }
    expectConsistent(dataDir)
    await restart(dataDir)
    expectConsistent(dataDir)
  })
})

describe('a deleted topic stays deleted on disk', () => {
  for (const backend of ['native', 'js'] as const) {
    it(`its directories are renamed <topic>-<n>.<id>-delete at once and removed; leftovers go at startup (${backend})`, async () => {
      const dataDir = tempDir('ferrolog-delete-dirs-')
      broker = await startBroker({ dataDir, backend })
      await broker.createTopic('doomed', 2, {})
      await broker.deleteTopic('doomed')
      expect(partitionDirs(dataDir).filter((d) => d.startsWith('doomed'))).toEqual([])
      await broker.stop()
      // A deletion interrupted before its removal finished.
      mkdirSync(join(dataDir, 'doomed-0.0123456789abcdef0123456789abcdef-delete'))
      writeFileSync(join(dataDir, 'doomed-0.0123456789abcdef0123456789abcdef-delete', '00000000000000000000.log'), 'old records')
      broker = await startBroker({ dataDir, backend })
      await broker.logManager.idle()
      expect(readdirSync(dataDir).filter((d) => d.startsWith('doomed'))).toEqual([])
    })
  }

  it("a directory whose topic id is not the store's, or of no stored topic, is not served and is set aside as -stray", async () => {
    const dataDir = tempDir('ferrolog-stray-')
    broker = await startBroker({ dataDir })
    const kept = (await broker.createTopic('kept', 1, {}))!
    const wire = await Wire.open(broker.port)
    await wire.produce('kept', 'current')
    await broker.stop()
    broker = undefined
    // A directory of the same name but another topic's id (a deletion that never finished), and
    // one of a topic the store does not hold.
    const other = Buffer.alloc(16, 9)
    for (const dir of ['kept-1', 'ghost-0']) {
      mkdirSync(join(dataDir, dir))
      await writePartitionMetadata(join(dataDir, dir), other)
    }
    broker = await startBroker({ dataDir })
    expect(broker.logManager.getLog('ghost', 0)).toBeUndefined()
    expect(broker.logManager.getLog('kept', 1)).toBeUndefined()
    expect(broker.logManager.getLog('kept', 0)!.topicId).toEqual(kept.topicId)
    const left = readdirSync(dataDir).filter((d) => d.endsWith('-stray'))
    expect(left.map((d) => d.replace(/\.[0-9a-f]{32}-stray$/, '')).sort()).toEqual(['ghost-0', 'kept-1'])
    // A topic created later under the stray's name starts empty with its own id.
    const ghost = (await broker.createTopic('ghost', 1, {}))!
    expect(broker.logManager.getLog('ghost', 0)!.logEndOffset()).toBe(0n)
    expect(broker.logManager.getLog('ghost', 0)!.topicId).toEqual(ghost.topicId)
    expectConsistent(dataDir)
  })
})

describe('partition bounds', () => {
  it('a CreateTopics for 1,000,000 partitions is refused at once; nothing is recorded; a restart works', async () => {
    const dataDir = tempDir('ferrolog-huge-')
    broker = await startBroker({ dataDir })
    await broker.createTopic('before', 1, {})
    const wire = await Wire.open(broker.port)
    const started = Date.now()
    const r = await wire.request(createTopicsCodec, CREATE_VERSION, {
      topics: [
        { name: 'huge', numPartitions: 1_000_000, replicationFactor: -1, assignments: [], configs: [] },
        { name: 'small', numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    })
    expect(Date.now() - started).toBeLessThan(2000)
    // Kafka's controller refuses the whole request: POLICY_VIOLATION for every topic.
    expect(r.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual([
      ['huge', ErrorCode.POLICY_VIOLATION, 'Excessively large number of partitions per request.'],
      ['small', ErrorCode.POLICY_VIOLATION, 'Excessively large number of partitions per request.'],
    ])
    expect([...storedTopics(dataDir).keys()]).toEqual(['before'])
    expect(partitionDirs(dataDir).filter((d) => !d.startsWith('__consumer_offsets-') && !d.startsWith('__transaction_state-'))).toEqual(['before-0'])
    // CreatePartitions is held to the same bound.
    const grown = await wire.request(createPartitionsCodec, 3, { topics: [{ name: 'before', count: 1_000_000, assignments: null }], timeoutMs: 5000, validateOnly: false })
    expect(grown.results[0].errorCode).toBe(ErrorCode.POLICY_VIOLATION)
    expect(broker.topics.get('before')!.partitions).toBe(1)
    await restart(dataDir)
    expectConsistent(dataDir)
  })

  it('max.broker.partitions bounds the partitions of all topics together', async () => {
    const dataDir = tempDir('ferrolog-broker-bound-')
    broker = await startBroker({ dataDir, props: { 'max.broker.partitions': '10', 'num.partitions': '3' } })
    const wire = await Wire.open(broker.port)
    expect((await wire.create('eight', 8)).topics[0].errorCode).toBe(ErrorCode.NONE)
    const over = await wire.create('three', 3)
    expect(over.topics[0].errorCode).toBe(ErrorCode.POLICY_VIOLATION)
    expect(over.topics[0].errorMessage).toMatch(/max\.broker\.partitions/)
    // Auto-creation (num.partitions=3) is refused the same way.
    expect((await wire.metadata(['auto'])).topics[0].errorCode).toBe(ErrorCode.POLICY_VIOLATION)
    const grown = await wire.request(createPartitionsCodec, 3, { topics: [{ name: 'eight', count: 11, assignments: null }], timeoutMs: 5000, validateOnly: false })
    expect(grown.results[0].errorCode).toBe(ErrorCode.POLICY_VIOLATION)
    expect((await wire.create('two', 2)).topics[0].errorCode).toBe(ErrorCode.NONE)
    expect([...storedTopics(dataDir).keys()].sort()).toEqual(['eight', 'two'])
    expectConsistent(dataDir)
    await restart(dataDir, 'native', { 'max.broker.partitions': '10' })
  })

  for (const backend of ['native', 'js'] as const) {
    it(`a start out of file descriptors says so, with the limit it needs (${backend})`, async () => {
      const dataDir = tempDir('ferrolog-fds-')
      broker = await startBroker({ dataDir, backend })
      for (let i = 0; i < 4; i++) await broker.createTopic(`many-${i}`, 50, {})
      await broker.stop()
      broker = undefined
      // Each partition's active segment keeps its .log, .index and .timeindex open: 200 partitions,
      // and the 50 of each internal topic, need 900.
      const r = await runProcess('prlimit', ['--nofile=256', process.execPath, CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--backend', backend], '', 30_000)
      expect(r.status).toBe(1)
      expect(r.stderr).toMatch(/cannot open the 30\d partition directories of .*: out of file descriptors .*needs at least 9\d\d: raise the open-file limit \(ulimit -n\)/)
      // Nothing was lost: with enough descriptors it starts and serves every topic.
      await restart(dataDir, backend)
      expectConsistent(dataDir)
    })

    it(`a soft open-file limit below the hard one is raised at start, as the JVM does (${backend})`, async () => {
      const dataDir = tempDir('ferrolog-fd-raise-')
      broker = await startBroker({ dataDir, backend })
      for (let i = 0; i < 4; i++) await broker.createTopic(`many-${i}`, 50, {})
      await broker.stop()
      broker = undefined
      // 200 partitions need about 600 descriptors: more than the soft 256, less than the hard 4096.
      const child = spawn('prlimit', ['--nofile=256:4096', process.execPath, CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--backend', backend], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      try {
        const log = await new Promise<string>((resolve, reject) => {
          let out = ''
          let err = ''
          const timer = setTimeout(() => reject(new Error(`not started in 30 s: ${err}`)), 30_000)
          // Started: the CLI's line on stdout, and the broker's log line on stderr.
          const check = () => {
            if (out.includes('listening on') && err.includes('"broker started"')) {
              clearTimeout(timer)
              resolve(err)
            }
          }
          child.on('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)))
          child.stderr!.on('data', (d: Buffer) => {
            err += d.toString()
            check()
          })
          child.stdout!.on('data', (d: Buffer) => {
            out += d.toString()
            check()
          })
        })
        expect(log).toMatch(/"msg":"broker started".*"openFiles":4096/)
        expect(readFileSync(`/proc/${child.pid}/limits`, 'utf8')).toMatch(/Max open files\s+4096\s+4096/)
      } finally {
        child.kill('SIGTERM')
        await new Promise((resolve) => child.once('close', resolve))
      }
    })

    it(`a creation that fails midway (no inodes left) records nothing and removes what it made (${backend})`, async () => {
      const dataDir = tempDir('ferrolog-midway-')
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,nr_inodes=80', 'tmpfs', dataDir])
      try {
        // One partition of each internal topic: the 80 inodes are for the topics created here.
        broker = await startBroker({ dataDir, backend, props: { 'offsets.topic.num.partitions': '1', 'transaction.state.log.num.partitions': '1' } })
        await broker.createTopic('small', 1, {})
        const wire = await Wire.open(broker.port)
        const r = await wire.create('wide', 40)
        expect(r.topics[0].errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR)
        expect(broker.topics.get('wide')).toBeUndefined()
        expect([...storedTopics(dataDir).keys()]).toEqual(['small'])
        expect(readdirSync(dataDir).filter((d) => d.startsWith('wide'))).toEqual([])
        // The broker still serves, and can create what fits.
        expect((await wire.create('fits', 1)).topics[0].errorCode).toBe(ErrorCode.NONE)
        expectConsistent(dataDir)
        await restart(dataDir, backend)
        expectConsistent(dataDir)
        await broker!.stop()
        broker = undefined
      } finally {
        // Unmounted even when the stop fails (a broker left with a full disk cannot checkpoint).
        const stopping = broker?.stop()
        broker = undefined
        await stopping?.catch(() => undefined)
        execFileSync('umount', [dataDir])
      }
    })
  }
})
