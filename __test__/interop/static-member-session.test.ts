/**
 * Issue 24 item 3, with Kafka's Java consumer (KIP-345 static member) against ferrolog and
 * against Apache Kafka 4.4, both with group.min.session.timeout.ms=5000 (Kafka's default, 6000,
 * refuses a 5 s session as ferrolog's does): a session of 4999 ms is refused
 * (InvalidSessionTimeoutException), one of 5000 ms is accepted; the member is closed (a static
 * member sends no LeaveGroup), so DeleteGroups first answers NON_EMPTY_GROUP, and once its own
 * 5 s session is over the group is deleted (NONE), within the 6 s of the report.
 */
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'
import { runJava } from '../helpers/java.js'

const GROUP_PROPS = { 'group.min.session.timeout.ms': '5000', 'group.initial.rebalance.delay.ms': '0' }

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

async function staticMember(port: number, group: string, sessionTimeoutMs: number): Promise<Record<string, string>> {
  const r = await runJava(join(__dirname, 'java/StaticMemberExpiry.java'), [`127.0.0.1:${port}`, 'jobs', group, String(sessionTimeoutMs)], { timeoutMs: 120_000 })
  return Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.split('=', 2) as [string, string]),
  )
}

async function scenario(port: number): Promise<void> {
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', 'jobs', '--partitions', '2', '--replication-factor', '1'])
  expect(await staticMember(port, 'short', 4999)).toEqual({ joinError: 'InvalidSessionTimeoutException' })
  const out = await staticMember(port, 'static', 5000)
  expect(out).toMatchObject({ assigned: '2', first: 'GroupNotEmptyException' })
  // Gone with its own 5 s session (its last heartbeat came before the close), not later.
  expect(Number(out.deletedAfterMs)).toBeLessThan(6000)
}

describe('a static member with a 5 s session, closed without LeaveGroup (Java consumer)', () => {
  it('ferrolog: 4999 ms refused, 5000 ms honoured; its group is deleted once the session ends', async () => {
    broker = await startBroker({ props: GROUP_PROPS })
    await scenario(broker.port)
  }, 180_000)

  it('Apache Kafka 4.4: the same', async () => {
    kafkaDir = tempDir('kafka-static-')
    const sets = Object.entries(GROUP_PROPS).flatMap(([k, v]) => ['--set', `${k}=${v}`])
    await scenario(kafkaBrokerPort(await runKafkaBroker(kafkaDir, sets)))
  }, 240_000)
})
