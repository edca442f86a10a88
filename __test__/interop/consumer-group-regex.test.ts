/**
 * Issue 27 item 1, regex subscriptions: Kafka's Java consumer in group.protocol=consumer with a
 * broker-side regular expression (SubscriptionPattern, RE2 syntax) against ferrolog and against
 * Apache Kafka 4.4, the same scenario and the same outcome (java/RegexSubscription.java): two
 * members of `<prefix>-.*` share `<prefix>-a` (a topic the regex does not match is left alone),
 * then `<prefix>-b` created while the group runs reaches them (the broker resolves the regex again
 * at a heartbeat 10 s after the last resolution); every record read once, no partition owned by
 * two members at once; a bad regex fails the consumer's poll with InvalidRegularExpression.
 */
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'
import { runJava } from '../helpers/java.js'

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
  before: 'metrics-a-0,metrics-a-1,metrics-a-2',
  after: 'metrics-a-0,metrics-a-1,metrics-a-2,metrics-b-0,metrics-b-1,metrics-b-2',
  consumed: '600',
  unique: '600',
  overlaps: '0',
  invalid: 'InvalidRegularExpression: Invalid RE2J SubscriptionPattern provided in the call to subscribe. SubscribedTopicRegex `metrics-(` is not a valid regular expression: missing closing ).',
}

/** The program's `key=value` lines, checked against `expected` (its whole output in the message). */
async function scenario(port: number): Promise<void> {
  const r = await runJava(join(__dirname, 'java/RegexSubscription.java'), [`127.0.0.1:${port}`, 'metrics'], { timeoutMs: 400_000 })
  const out = Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )
  if (out.error !== undefined) throw new Error(`${out.error}\n${r.stdout}\n${r.stderr.slice(-4000)}`)
  expect(out, r.stdout).toEqual(expected)
}

describe('KIP-848 regex subscriptions: two Java consumers on SubscriptionPattern("metrics-.*"), a matching topic created later', () => {
  it("ferrolog; the regex's ConsumerGroupRegularExpression records are read by Kafka's own decoder", async () => {
    const dataDir = tempDir('ferrolog-kip848-regex-')
    broker = await startBroker({ dataDir })
    await scenario(broker.port)
    await broker.stop()
    broker = undefined
    const dump = await runKafkaClass(
      'org.apache.kafka.tools.DumpLogSegments',
      ['--deep-iteration', '--offsets-decoder', '--files', join(dataDir, `__consumer_offsets-${partitionFor('metrics-group', 50)}`, '00000000000000000000.log')],
      '',
      120_000,
    )
    expect(dump.status).toBe(0)
    expect(dump.stdout).not.toMatch(/Unknown|Exception|failed/i)
    // Resolved with metrics-a, then again with metrics-b; tombstoned when the group's members left.
    const regexRecords = [...dump.stdout.matchAll(/key: \{"type":"16","data":\{"groupId":"metrics-group","regularExpression":"metrics-\.\*"\}\} payload: (\S+)/g)].map((m) => m[1])
    expect(regexRecords[0]).toMatch(/"topics":\["metrics-a"\]/)
    expect(regexRecords).toContainEqual(expect.stringMatching(/"topics":\["metrics-a","metrics-b"\]/))
    expect(regexRecords.at(-1)).toBe('<DELETE>')
  }, 600_000)

  it('Apache Kafka 4.4: the same', async () => {
    kafkaDir = tempDir('kafka-kip848-regex-')
    await scenario(kafkaBrokerPort(await runKafkaBroker(kafkaDir)))
  }, 600_000)
})
