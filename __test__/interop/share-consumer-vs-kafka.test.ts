/**
 * Issue 28 item 2 (share groups, KIP-932: the share partition on the leader, ShareFetch and
 * ShareAcknowledge) side by side with Apache Kafka 4.4: Kafka's own KafkaShareConsumer, several
 * in one share group over one partition (java/ShareConsumers.java), against ferrolog and against
 * a reference Kafka broker, the same outcome on both:
 *
 * - accept: every record delivered once, with delivery count 1, and accepted;
 * - ack: records released on their first delivery come back with delivery count 2; records
 *   always released are delivered share.delivery.count.limit (3) times, then archived; rejected
 *   records are never delivered again; nothing is accepted twice; a fresh member gets nothing;
 * - stall: records held by a member that stopped polling (connection and heartbeats alive, no
 *   acknowledgement) are redelivered to the others once their 4 s lock expired, with their
 *   delivery count up, and every record is accepted.
 *
 * Issue 28 item 5: ferrolog's own ShareConsumer (ts/client/share-consumer.ts) in the same roles,
 * against the same two brokers (share-work-queue.ts): four consumers over one partition of
 * SHARE_CONSUMER_RECORDS records (5,000 by default; 100,000 for the big figure) in implicit
 * mode, then in explicit mode with releases, rejections and a consumer that stops; a late
 * acknowledgement (INVALID_RECORD_STATE) and a poll with records not acknowledged.
 *
 * Both brokers run with group.share.min.record.lock.duration.ms=1000, so the stall group's
 * share.record.lock.duration.ms of 4 s is allowed. One broker of each per file: started once,
 * shared by the cases (each has its own topics and groups).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { runJava } from '../helpers/java.js'
import { explicitScenario, implicitScenario, lateAcknowledgementScenario } from './share-work-queue.js'

const RECORDS = 200
const MIN_LOCK = { 'group.share.min.record.lock.duration.ms': '1000' }

const WORK_RECORDS = Number(process.env.SHARE_CONSUMER_RECORDS ?? 5000)

beforeAll(() => fetchKafkaJars(), 300_000)

const expected = {
  'accept.distinct': String(RECORDS),
  'accept.deliveries': String(RECORDS),
  'accept.deliveryCount1': String(RECORDS),
  // Offsets 0..199: 20 of each kind ending in 3, 5, 7; 140 others.
  'ack.deliveries': '{accepted:[1]=140, always-released:[1, 2, 3]=20, rejected:[1]=20, released-once:[1, 2]=20}',
  'ack.acceptedMoreThanOnce': '0',
  'ack.deliveredAfterwards': '0',
  'stall.held': 'true',
  'stall.heldRedeliveredWithCountUp': 'true',
  'stall.distinct': String(RECORDS),
}

/** The program's `key=value` lines, checked against `expected` (its whole output in the message). */
async function scenario(port: number): Promise<void> {
  const r = await runJava(join(__dirname, 'java/ShareConsumers.java'), [`127.0.0.1:${port}`, 'jobs', String(RECORDS)], { timeoutMs: 400_000 })
  const out = Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )
  if (out.error !== undefined) throw new Error(`${out.error}\n${r.stdout}\n${r.stderr.slice(-4000)}`)
  expect(out, r.stdout + r.stderr.slice(-4000)).toEqual(expected)
}

/** What ferrolog's ShareConsumer scenarios must see, on either broker. */
const count = (pred: (i: number) => boolean) => Array.from({ length: WORK_RECORDS }, (_, i) => i).filter(pred).length
const expectedImplicit = { distinct: WORK_RECORDS, deliveries: WORK_RECORDS, deliveryCounts: { 1: WORK_RECORDS }, ackErrors: [] }
const expectedExplicit = {
  distinct: WORK_RECORDS,
  outcome: { accepted: count((i) => i % 10 !== 7), rejected: count((i) => i % 10 === 7), acceptedAtCountUp: count((i) => i % 10 === 3) },
  stallerHeld: true,
  stallerRedeliveredWithCountUp: true,
  heldTwice: 0,
  countNotUp: 0,
  acceptedTwice: 0,
  deliveredAfterSettled: 0,
  workerAckErrors: [],
}
const expectedLate = {
  first: [[0n, 1]],
  second: [[0n, 2]],
  aCommit: ['INVALID_RECORD_STATE'],
  aCallback: [{ offsets: ['0'], error: 'INVALID_RECORD_STATE' }],
  bCommit: [null],
  unacknowledged: 'ILLEGAL_STATE: All records must be acknowledged in explicit acknowledgement mode.',
}

/** A directory for a broker the file's cases share (tempDir's are removed after each case). */
const brokerDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix))

/** The cases, against the broker at `port()`. */
function cases(port: () => number): void {
  it('Kafka 4.4 KafkaShareConsumers in one share group over one partition', async () => {
    await scenario(port())
  }, 200_000)

  it('ferrolog ShareConsumers, implicit acknowledgement: each record delivered and accepted once', async () => {
    expect(await implicitScenario(`127.0.0.1:${port()}`, WORK_RECORDS)).toEqual(expectedImplicit)
  }, 300_000)

  it('ferrolog ShareConsumers, explicit acknowledgement: releases, rejections, a consumer that stops', async () => {
    expect(await explicitScenario(`127.0.0.1:${port()}`, WORK_RECORDS)).toEqual(expectedExplicit)
  }, 300_000)

  it('ferrolog ShareConsumers: a late acknowledgement fails with INVALID_RECORD_STATE; a poll over records not acknowledged throws', async () => {
    expect(await lateAcknowledgementScenario(`127.0.0.1:${port()}`)).toEqual(expectedLate)
  }, 200_000)
}

describe('KIP-932 share consumers against ferrolog', () => {
  let broker: Broker | undefined
  const dataDir = brokerDir('ferrolog-share-consumers-')
  beforeAll(async () => {
    broker = await startBroker({ dataDir, props: MIN_LOCK })
  })
  afterAll(async () => {
    await broker?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  cases(() => broker!.port)
})

describe('KIP-932 share consumers against Apache Kafka 4.4 (the reference)', () => {
  let kafkaDir: string | undefined
  let kafkaPort = 0
  beforeAll(async () => {
    kafkaDir = brokerDir('kafka-share-consumers-')
    kafkaPort = kafkaBrokerPort(
      await runKafkaBroker(
        kafkaDir,
        Object.entries(MIN_LOCK).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
      ),
    )
  }, 300_000)
  afterAll(() => {
    if (kafkaDir) stopKafkaBroker(kafkaDir)
    if (kafkaDir) rmSync(kafkaDir, { recursive: true, force: true })
  })
  cases(() => kafkaPort)
})
