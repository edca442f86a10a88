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
 * Both brokers run with group.share.min.record.lock.duration.ms=1000, so the stall group's
 * share.record.lock.duration.ms of 4 s is allowed.
 */
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'
import { runJava } from '../helpers/java.js'

const RECORDS = 200
const MIN_LOCK = { 'group.share.min.record.lock.duration.ms': '1000' }

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

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

describe('KIP-932 share consumers: Kafka 4.4 KafkaShareConsumers in one share group over one partition', () => {
  it('ferrolog', async () => {
    broker = await startBroker({ props: MIN_LOCK })
    await scenario(broker.port)
  }, 200_000)

  it('Apache Kafka 4.4 (the reference)', async () => {
    kafkaDir = tempDir('kafka-share-consumers-')
    const port = kafkaBrokerPort(
      await runKafkaBroker(
        kafkaDir,
        Object.entries(MIN_LOCK).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
      ),
    )
    await scenario(port)
  }, 200_000)
})
