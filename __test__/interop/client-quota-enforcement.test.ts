/**
 * Client quotas enforced (issue 29 item 5), the same scenario against ferrolog and Apache Kafka
 * 4.4, both with quota.window.num=3 and quota.window.size.seconds=1 (the rate measured over 2-4
 * seconds, so that a few seconds show it):
 *
 * - a producer whose client id has producer_byte_rate Q sends requests one after the other for a
 *   few seconds: answers carry throttle_time_ms > 0, none before the bytes exceed what the window
 *   allows at once ((num - 1) windows of Q), and the bytes accepted stay near Q: at most what the
 *   retained samples allow in every 2-second span and over the whole run;
 * - a consumer with consumer_byte_rate Q fetching the same way: throttled answers are empty, and
 *   the record bytes received are bounded alike;
 * - a client with request_percentage 1 (10 ms of request handling a second) sending Metadata
 *   requests back to back is throttled, never longer than one window (Kafka's cap for request
 *   quotas);
 * - the quotas removed, the next requests are not throttled, far past the old bounds.
 *
 * The bounds come from the quota and the windows, never from how fast the machine is: only
 * ceilings (the broker mutes the connection, so a slow machine only sends less), and floors that
 * any machine clears (a tenth of the quota).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { alterClientQuotasCodec } from '../../ts/protocol/apis/alter-client-quotas.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { defaultCreateTopicsRequest } from '../../ts/protocol/messages/create-topics-request.js'
import { describeClientQuotasCodec } from '../../ts/protocol/apis/describe-client-quotas.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'

const WINDOWS = { 'quota.window.num': '3', 'quota.window.size.seconds': '1' }
const NUM = 3
/** The quota, bytes per second. */
const Q = 40_000
/** One request's record bytes. */
const VALUE = 4_000
const RUN_MS = 6_000
const TOPIC = 'quota-topic'
/** A request's (response's) bytes besides its records, at most. */
const OVERHEAD = 200

let broker: Broker | undefined
let kafkaDir: string | undefined
let ferrologDir: string | undefined
let kafkaPort = 0

beforeAll(async () => {
  fetchKafkaJars()
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-quota-enf-'))
  broker = await startBroker({ dataDir: ferrologDir, props: WINDOWS })
  kafkaDir = mkdtempSync(join(tmpdir(), 'kafka-quota-enf-'))
  kafkaPort = kafkaBrokerPort(
    await runKafkaBroker(
      kafkaDir,
      Object.entries(WINDOWS).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
    ),
  )
}, 300_000)
afterAll(async () => {
  try {
    await broker?.stop()
  } finally {
    if (kafkaDir) stopKafkaBroker(kafkaDir)
    for (const dir of [ferrologDir, kafkaDir]) if (dir) rmSync(dir, { recursive: true, force: true })
  }
})

async function setQuota(port: number, clientId: string, key: string, value: number | null): Promise<void> {
  const admin = new KafkaWire(await connectTo(port), 'quota-admin')
  try {
    const entity = [{ entityType: 'client-id', entityName: clientId }]
    const r = await admin.send(alterClientQuotasCodec, 1, { entries: [{ entity, ops: [{ key, value: value ?? 0, remove: value === null }] }], validateOnly: false })
    expect(r.entries.map((e) => e.errorCode)).toEqual([0])
    // Kafka's brokers apply it a moment after the controller acknowledged it: wait until it is described.
    const components = [{ entityType: 'client-id', matchType: 0, match: clientId }]
    for (let i = 0; i < 200; i++) {
      const d = await admin.send(describeClientQuotasCodec, 1, { components, strict: true })
      const has = d.entries?.some((e) => e.values.some((v) => v.key === key && v.value === value)) ?? false
      if (has === (value !== null)) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // And a moment more for the broker's quota callback, which follows the same image.
    await new Promise((resolve) => setTimeout(resolve, 200))
  } finally {
    admin.close()
  }
}

interface Sample {
  atMs: number
  bytes: number
  throttleTimeMs: number
}

/**
 * The checks every run of one client must pass: throttled, never before the bytes exceed what the
 * windows allow at once, and the bytes of every 2-second span and of the whole run within what
 * the retained samples (num + 1 of them, one request over) allow.
 */
function expectWithinQuota(samples: Sample[], request: number): void {
  const throttled = samples.findIndex((s) => s.throttleTimeMs > 0)
  expect(throttled).toBeGreaterThanOrEqual(0)
  const before = samples.slice(0, throttled + 1).reduce((n, s) => n + s.bytes, 0)
  // Rate.windowSize is never under (num - 1) windows: nothing is throttled below Q of each. The
  // broker counts whole requests (responses), headers too: at most OVERHEAD more than the records.
  expect(before + (throttled + 1) * OVERHEAD).toBeGreaterThan(Q * (NUM - 1))
  const ceiling2s = Q * (NUM + 1) + 2 * request
  const start = samples[0]!.atMs
  const end = samples[samples.length - 1]!.atMs
  for (let from = start; from + 2000 <= end; from += 250) {
    const bytes = samples.filter((s) => s.atMs >= from && s.atMs < from + 2000).reduce((n, s) => n + s.bytes, 0)
    expect(bytes, `bytes in the 2 s from ${from - start} ms`).toBeLessThanOrEqual(ceiling2s)
  }
  const total = samples.reduce((n, s) => n + s.bytes, 0)
  const seconds = (end - start) / 1000
  if (process.env.QUOTA_REPORT)
    console.log(
      JSON.stringify({
        requests: samples.length,
        throttled: samples.filter((s) => s.throttleTimeMs > 0).length,
        maxThrottleMs: Math.max(...samples.map((s) => s.throttleTimeMs)),
        beforeFirstThrottle: before,
        total,
        seconds,
        bytesPerSecond: Math.round(total / seconds),
      }),
    )
  expect(total).toBeLessThanOrEqual(Q * (seconds + NUM + 1) + 2 * request)
  expect(total).toBeGreaterThanOrEqual((Q * seconds) / 10)
}

const targets = [
  { name: 'ferrolog', port: () => broker!.port },
  { name: 'Apache Kafka 4.4', port: () => kafkaPort },
]

describe.each(targets)('client quotas enforced on $name', ({ port }) => {
  it('a producer over producer_byte_rate is throttled to it, and no longer once the quota is removed', async () => {
    const admin = new KafkaWire(await connectTo(port()), 'quota-admin')
    const created = await admin.send(createTopicsCodec, 7, {
      ...defaultCreateTopicsRequest(),
      timeoutMs: 30_000,
      topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
    })
    admin.close()
    expect(created.topics[0]!.errorCode).toBe(0)
    await setQuota(port(), 'slow-producer', 'producer_byte_rate', Q)

    const wire = new KafkaWire(await connectTo(port()), 'slow-producer')
    const records = buildBatch([{ key: null, value: Buffer.alloc(VALUE, 7) }])
    const produce = async (): Promise<Sample> => {
      const r = await wire.send(produceCodec, 9, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] })
      expect(r.responses[0]!.partitionResponses[0]!.errorCode).toBe(0)
      return { atMs: performance.now(), bytes: records.length, throttleTimeMs: r.throttleTimeMs }
    }
    try {
      const samples: Sample[] = []
      const start = performance.now()
      while (performance.now() - start < RUN_MS) samples.push(await produce())
      expectWithinQuota(samples, records.length)

      await setQuota(port(), 'slow-producer', 'producer_byte_rate', null)
      const after: Sample[] = []
      // Far more than the quota let through in any span above.
      while (after.length * records.length < 3 * Q * (NUM + 1)) after.push(await produce())
      // The first answer may still carry the last throttle recorded under the quota on Kafka (see report).
      expect(after.slice(1).filter((s) => s.throttleTimeMs > 0)).toEqual([])
    } finally {
      wire.close()
    }
  }, 120_000)

  it('a consumer over consumer_byte_rate gets empty throttled answers and no more than its quota', async () => {
    // Enough records to read for the whole run, produced without a quota.
    const feeder = new KafkaWire(await connectTo(port()), 'feeder')
    const batch = buildBatch(Array.from({ length: 10 }, () => ({ key: null, value: Buffer.alloc(VALUE / 10, 3) })))
    for (let i = 0; i < 120; i++) await feeder.send(produceCodec, 9, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch }] }] })
    feeder.close()
    await setQuota(port(), 'slow-consumer', 'consumer_byte_rate', Q)

    const wire = new KafkaWire(await connectTo(port()), 'slow-consumer')
    let offset = 0n
    const fetch = async (): Promise<Sample> => {
      const r = await wire.send(
        fetchCodec,
        12,
        fetchRequest({
          topics: [
            {
              topic: TOPIC,
              topicId: Buffer.alloc(16),
              partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: VALUE }],
            },
          ],
        }),
      )
      const p = r.responses[0]?.partitions[0]
      if (r.throttleTimeMs > 0) expect(r.responses).toEqual([])
      const bytes = p?.records ? (p.records as Buffer).length : 0
      if (p && bytes > 0) {
        expect(p.errorCode).toBe(0)
        offset = p.highWatermark < offset + 10n ? p.highWatermark : offset + BigInt(Math.floor(bytes / batch.length) * 10)
      }
      return { atMs: performance.now(), bytes, throttleTimeMs: r.throttleTimeMs }
    }
    try {
      const samples: Sample[] = []
      const start = performance.now()
      while (performance.now() - start < RUN_MS) samples.push(await fetch())
      expectWithinQuota(samples, VALUE + batch.length)
      // Every answer that was not throttled held records: the consumer never starved for lack of data.
      expect(samples.filter((s) => s.throttleTimeMs === 0 && s.bytes === 0)).toEqual([])
    } finally {
      wire.close()
    }
  }, 120_000)

  it('a client over request_percentage is throttled, at most one window at a time, and no longer once the quota is removed', async () => {
    await setQuota(port(), 'busy-client', 'request_percentage', 1)
    const wire = new KafkaWire(await connectTo(port()), 'busy-client')
    const metadata = async () =>
      (await wire.send(metadataCodec, 12, { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })).throttleTimeMs
    try {
      // (num - 1) windows at 1 %: throttled once the requests took 20 ms of handling, whatever each costs.
      const throttles: number[] = []
      for (let i = 0; i < 50_000 && !throttles.some((t) => t > 0); i++) throttles.push(await metadata())
      const positive = throttles.filter((t) => t > 0)
      expect(positive.length).toBeGreaterThan(0)
      for (let i = 0; i < 20; i++) positive.push(await metadata())
      expect(Math.max(...positive)).toBeLessThanOrEqual(1000)
      await setQuota(port(), 'busy-client', 'request_percentage', null)
      const after: number[] = []
      for (let i = 0; i < 500; i++) after.push(await metadata())
      expect(after.slice(1).filter((t) => t > 0)).toEqual([])
    } finally {
      wire.close()
    }
  }, 180_000)
})
