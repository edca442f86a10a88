/**
 * Issue 27 item 2: ferrolog's Consumer in both group protocols (group.protocol=classic, the
 * default, and consumer: KIP-848) against ferrolog's broker (the same scenarios run against
 * Apache Kafka 4.4 in consumer-group-protocol-kafka.test.ts): three members over 12 partitions
 * joining and leaving, every record exactly once and no partition owned by two members at once
 * (from a log of every member's rebalance callbacks); a member in a child process SIGKILLed, its
 * partitions moving to the others after the session timeout, no record missing. And the
 * configuration rules of Kafka's ConsumerConfig for group.protocol.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { consumerConfigFrom } from '../../ts/client/consumer-config.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import {
  FERROLOG_GROUP_CONFIG,
  joinLeaveScenario,
  killedMemberScenario,
  memberEpochCommitScenario,
  migrationScenario,
  brokerRegexScenario,
  remoteAssignorScenario,
  staleMemberScenario,
  staticMemberScenario,
  type Protocol,
} from './group-protocol-scenarios.js'

let broker: Broker
let bootstrap: string

beforeAll(async () => {
  broker = await startBroker({ config: FERROLOG_GROUP_CONFIG })
  bootstrap = broker.bootstrapServers
})

afterAll(async () => {
  await broker?.stop()
})

describe('group.protocol configuration (as Kafka 4.4 ConsumerConfig)', () => {
  const base = { bootstrapServers: '127.0.0.1:1', groupId: 'g' }
  it('classic by default; consumer in any case; anything else refused', () => {
    expect(consumerConfigFrom(base).groupProtocol).toBe('classic')
    expect(consumerConfigFrom({ ...base, 'group.protocol': 'CONSUMER' }).groupProtocol).toBe('consumer')
    expect(() => consumerConfigFrom({ ...base, 'group.protocol': 'bogus' })).toThrow(/group.protocol=bogus: String must be one of \(case insensitive\): CONSUMER, CLASSIC/)
  })

  it("the classic protocol's settings cannot be set with group.protocol=consumer; group.remote.assignor not with classic", () => {
    for (const [name, value] of [
      ['session.timeout.ms', 10_000],
      ['heartbeat.interval.ms', 1000],
      ['partition.assignment.strategy', 'range'],
    ] as const) {
      expect(() => consumerConfigFrom({ ...base, 'group.protocol': 'consumer', [name]: value })).toThrow(`${name}=${value}: cannot be set when group.protocol=CONSUMER`)
      expect(() => new Consumer({ ...base, 'group.protocol': 'consumer', [name]: value })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }))
    }
    expect(() => consumerConfigFrom({ ...base, 'group.remote.assignor': 'range' })).toThrow('group.remote.assignor=range: cannot be set when group.protocol=CLASSIC')
    const c = consumerConfigFrom({ ...base, 'group.protocol': 'consumer', 'group.remote.assignor': 'range', 'group.instance.id': 'i1' })
    expect([c.groupRemoteAssignor, c.groupInstanceId]).toEqual(['range', 'i1'])
  })
})

describe.each<Protocol>(['classic', 'consumer'])('Consumer with group.protocol=%s against ferrolog', (protocol) => {
  it('3 members over 12 partitions joining and leaving: every record once, no partition owned twice at once, commits at the log ends', async () => {
    const log = await joinLeaveScenario(bootstrap, `join-leave-${protocol}`, protocol, 24_000)
    if (process.env.SHOW_LOG) console.log(JSON.stringify(log.events.map((e) => [e.member, e.kind, e.partitions.length])))
    expect(log.events.filter((e) => e.kind === 'lost')).toEqual([])
  }, 180_000)

  it('a member SIGKILLed: its partitions move after the session timeout, no record missing', async () => {
    const { movedAfterMs } = await killedMemberScenario(bootstrap, `killed-${protocol}`, protocol, 6000)
    if (process.env.SHOW_LOG) console.log(`${protocol}: the killed member's partitions moved after ${movedAfterMs} ms`)
    // The session is 10 s (the client's session.timeout.ms for classic, the broker's for consumer).
    expect(movedAfterMs).toBeGreaterThan(5000)
  }, 180_000)
})

describe('group.protocol=consumer only, against ferrolog', () => {
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
