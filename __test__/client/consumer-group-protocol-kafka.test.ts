/**
 * Issue 27 item 2 against Apache Kafka 4.4 (tools/kafka/run-broker.sh, one broker for the file,
 * its KIP-848 session 10 s and heartbeat interval 500 ms as ferrolog's in
 * consumer-group-protocol.test.ts): ferrolog's Consumer in both group protocols, the same
 * scenarios with the same outcome.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import {
  joinLeaveScenario,
  KAFKA_GROUP_SETTINGS,
  killedMemberScenario,
  memberEpochCommitScenario,
  migrationScenario,
  brokerRegexScenario,
  remoteAssignorScenario,
  staleMemberScenario,
  staticMemberScenario,
  type Protocol,
} from './group-protocol-scenarios.js'

let dir: string
let bootstrap: string

beforeAll(async () => {
  fetchKafkaJars()
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-group-protocol-'))
  bootstrap = `127.0.0.1:${kafkaBrokerPort(
    await runKafkaBroker(
      dir,
      KAFKA_GROUP_SETTINGS.flatMap((kv) => ['--set', kv]),
    ),
  )}`
}, 300_000)

afterAll(() => {
  if (!dir) return
  stopKafkaBroker(dir)
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

describe.each<Protocol>(['classic', 'consumer'])('Consumer with group.protocol=%s against Apache Kafka 4.4', (protocol) => {
  it('3 members over 12 partitions joining and leaving: every record once, no partition owned twice at once, commits at the log ends', async () => {
    const log = await joinLeaveScenario(bootstrap, `join-leave-${protocol}`, protocol, 24_000)
    expect(log.events.filter((e) => e.kind === 'lost')).toEqual([])
  }, 180_000)

  it('a member SIGKILLed: its partitions move after the session timeout, no record missing', async () => {
    const { movedAfterMs } = await killedMemberScenario(bootstrap, `killed-${protocol}`, protocol, 6000)
    if (process.env.SHOW_LOG) console.log(`${protocol}: the killed member's partitions moved after ${movedAfterMs} ms`)
    expect(movedAfterMs).toBeGreaterThan(5000)
  }, 180_000)
})

describe('group.protocol=consumer only, against Apache Kafka 4.4', () => {
  it("group.remote.assignor=range is the group's assignor; an unknown one makes poll throw UNSUPPORTED_ASSIGNOR", async () => {
    await remoteAssignorScenario(bootstrap, 'remote-assignor')
  }, 120_000)

  it('static membership: close leaves with epoch -2, a restart gets the same partitions with no rebalance for the other; a live instance id is refused (UNRELEASED_INSTANCE_ID)', async () => {
    await staticMemberScenario(bootstrap, 'static-848')
  }, 120_000)

  it('max.poll.interval.ms: a stalled member leaves, its commit fails (UNKNOWN_MEMBER_ID), its partitions are lost and its next poll rejoins', async () => {
    await staleMemberScenario(bootstrap, 'stale-848')
  }, 150_000)

  it('OffsetCommit/OffsetFetch with an older member epoch: STALE_MEMBER_EPOCH fails a commit, and is retried with the newer epoch before a revocation and by OffsetFetch', async () => {
    await memberEpochCommitScenario(bootstrap, 'epoch-commit')
  }, 120_000)

  it('SubscriptionPattern: the coordinator resolves the regex, a topic created later reaches the members, groupMetadata() is each member; a bad regex fails the poll', async () => {
    await brokerRegexScenario(bootstrap, 'sensors', 3000)
  }, 150_000)

  it('a live classic group upgraded by a member with group.protocol=consumer and downgraded when it leaves: every record read, no partition owned twice at once', async () => {
    await migrationScenario(bootstrap, 'migrating', 3000)
  }, 240_000)
})
