/**
 * KIP-848 regex subscriptions (`subscribedTopicRegex`) in the group coordinator
 * (ts/group/consumer/consumer-group-manager.ts, ./topic-regex-resolver.ts), as Kafka's
 * GroupMetadataManagerTest drives them: RE2 syntax (INVALID_REGULAR_EXPRESSION with RE2's
 * description), whole-name matches, a topic created later picked up at a heartbeat 10 s after the
 * last resolution, topics the member may not DESCRIBE left out, the regex's record persisted and
 * replayed, and tombstoned when its last member leaves.
 */
import { describe, expect, it } from 'vitest'
import type { Assignment } from '../../ts/group/consumer/assignment.js'
import type { ConsumerGroupHeartbeatParams, ConsumerGroupHeartbeatResult, TopicsImage } from '../../ts/group/consumer/consumer-group-manager.js'
import { resolveRegularExpressions, throwIfRegularExpressionIsInvalid } from '../../ts/group/consumer/topic-regex-resolver.js'
import { replayConsumerGroupRecord, regularExpressionRecord } from '../../ts/group/consumer/consumer-group-records.js'
import type { ConsumerGroup } from '../../ts/group/consumer/consumer-group.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, type Harness } from './harness.js'

/** Topics by name: partition count and a stable id. */
function topicsImage(topics: Map<string, number>): TopicsImage {
  const id = (name: string) => Buffer.from(name.padEnd(16, '#').slice(0, 16))
  const image = (name: string) => (topics.has(name) ? { name, topicId: id(name), numPartitions: topics.get(name)! } : undefined)
  return {
    byName: image,
    byId: (hex) => image([...topics.keys()].find((n) => id(n).toString('hex') === hex) ?? ''),
    names: () => topics.keys(),
  }
}

function heartbeat(h: Harness, p: Partial<ConsumerGroupHeartbeatParams> & { memberId: string; memberEpoch: number }): ConsumerGroupHeartbeatResult {
  return h.coordinator.consumerGroupHeartbeat({
    groupId: GROUP,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    apiVersion: 1,
    sessionTimeoutMs: 600_000,
    heartbeatIntervalMs: 5000,
    ...p,
  })
}

const joinRegex = (h: Harness, memberId: string, regex: string, extra: Partial<ConsumerGroupHeartbeatParams> = {}) =>
  heartbeat(h, { memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicRegex: regex, topicPartitions: [], ...extra })

/** `topic-partition` names of an assignment, sorted. */
function named(h: Harness, a: Assignment | null, topics: TopicsImage): string[] | null {
  if (a === null) return null
  void h
  return [...a].flatMap(([id, ps]) => [...ps].map((p) => `${topics.byId(id)!.name}-${p}`)).sort()
}

const owned = (a: Assignment) => [...a].map(([topicId, partitions]) => ({ topicId: Buffer.from(topicId, 'hex'), partitions: [...partitions] }))

describe('regex subscriptions (subscribedTopicRegex)', () => {
  it('RE2 syntax: what Kafka refuses is INVALID_REGULAR_EXPRESSION with its message; matches are whole names', () => {
    expect(() => throwIfRegularExpressionIsInvalid('orders-(')).toThrow('SubscribedTopicRegex `orders-(` is not a valid regular expression: missing closing ).')
    // Lookarounds and backreferences: JavaScript's RegExp takes them, RE2 does not.
    expect(() => throwIfRegularExpressionIsInvalid('orders(?!-eu)')).toThrow(/not a valid regular expression/)
    expect(() => throwIfRegularExpressionIsInvalid('(a)\\1')).toThrow(/not a valid regular expression/)
    expect(() => throwIfRegularExpressionIsInvalid('(?i)orders-\\p{L}+')).not.toThrow()
    const resolved = resolveRegularExpressions(['orders.*', 'eu'], ['orders-eu', 'eu-orders', 'eu', 'orders'], () => true, 5)
    expect([...resolved.get('orders.*')!.topics].sort()).toEqual(['orders', 'orders-eu'])
    expect([...resolved.get('eu')!.topics]).toEqual(['eu'])
    expect(resolved.get('eu')!.timestamp).toBe(5)
  })

  it('a bad regex is refused before the member joins; a valid one gets the matching topics in the same heartbeat', async () => {
    const topics = new Map([
      ['orders-eu', 2],
      ['orders-us', 2],
      ['payments', 2],
    ])
    const image = topicsImage(topics)
    const h = await harness({ topics: image })
    expect(joinRegex(h, 'a', 'orders-[')).toMatchObject({
      errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION,
      errorMessage: 'SubscribedTopicRegex `orders-[` is not a valid regular expression: missing closing ].',
    })
    expect(h.coordinator.consumerGroup(GROUP)?.members.size ?? 0).toBe(0)
    // Either names or a regex when joining; an empty regex joins without topics.
    expect(heartbeat(h, { memberId: 'a', memberEpoch: 0, rebalanceTimeoutMs: 30_000, topicPartitions: [] }).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    const r = joinRegex(h, 'a', 'orders-.*')
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2 })
    expect(named(h, r.assignment, image)).toEqual(['orders-eu-0', 'orders-eu-1', 'orders-us-0', 'orders-us-1'])
    const group = h.coordinator.consumerGroup(GROUP)!
    expect([...group.resolvedRegularExpressions.get('orders-.*')!.topics].sort()).toEqual(['orders-eu', 'orders-us'])
    expect(group.isSubscribedToTopic('orders-eu')).toBe(true)
    expect(group.isSubscribedToTopic('payments')).toBe(false)
  })

  it('a topic created later reaches the members at a heartbeat 10 s after the last resolution; names and regex mix', async () => {
    const topics = new Map([['orders-eu', 2]])
    const image = topicsImage(topics)
    const h = await harness({ topics: image })
    let a = joinRegex(h, 'a', 'orders-.*', { subscribedTopicNames: ['payments'] })
    expect(named(h, a.assignment, image)).toEqual(['orders-eu-0', 'orders-eu-1'])
    const beat = (memberId: string, epoch: number, assignment: Assignment) => heartbeat(h, { memberId, memberEpoch: epoch, topicPartitions: owned(assignment) })
    let current = a.assignment!
    topics.set('orders-us', 1)
    topics.set('payments', 1)
    // payments is named: the next heartbeat sees it; orders-us waits for the regex's refresh.
    a = beat('a', 2, current)
    expect(a.memberEpoch).toBe(3)
    current = a.assignment!
    expect(named(h, current, image)).toEqual(['orders-eu-0', 'orders-eu-1', 'payments-0'])
    h.advance(10_000)
    expect(beat('a', 3, current)).toMatchObject({ memberEpoch: 3, assignment: null })
    h.advance(1)
    a = beat('a', 3, current)
    expect(a.memberEpoch).toBe(4)
    expect(named(h, a.assignment, image)).toEqual(['orders-eu-0', 'orders-eu-1', 'orders-us-0', 'payments-0'])
    // Nothing new: no refresh, no record, no epoch.
    h.advance(20_000)
    expect(beat('a', 4, a.assignment!)).toMatchObject({ memberEpoch: 4, assignment: null })
    // A deleted topic leaves at the next heartbeat (the subscribed topics are looked up each time).
    const epoch = h.coordinator.consumerGroup(GROUP)!.groupEpoch
    topics.delete('orders-eu')
    const after = beat('a', 4, a.assignment!)
    expect(h.coordinator.consumerGroup(GROUP)!.groupEpoch).toBe(epoch + 1)
    expect(named(h, after.assignment, image)).toEqual(['orders-us-0', 'payments-0'])
  })

  it('group.consumer.regex.refresh.interval.ms: the regex is resolved again once it passed, even without new topics', async () => {
    const resolvedAt = (h: Harness) => h.coordinator.consumerGroup(GROUP)!.resolvedRegularExpressions.get('orders-.*')!.timestamp
    for (const [interval, refreshed] of [
      [undefined, false],
      [30_000, true],
    ] as const) {
      const image = topicsImage(new Map([['orders-eu', 2]]))
      const h = await harness({ topics: image, consumerGroupRegexRefreshIntervalMs: interval })
      const a = joinRegex(h, 'a', 'orders-.*')
      const first = resolvedAt(h)
      // Past the 10 s batch interval but not the refresh interval: the same topics, no resolution.
      h.advance(20_000)
      expect(heartbeat(h, { memberId: 'a', memberEpoch: 2, topicPartitions: owned(a.assignment!) })).toMatchObject({ memberEpoch: 2, assignment: null })
      expect(resolvedAt(h)).toBe(first)
      // 30 s and 1 ms after it: resolved again with the custom interval (the same topics: no new epoch); not with the default 600 s.
      h.advance(10_001)
      expect(heartbeat(h, { memberId: 'a', memberEpoch: 2, topicPartitions: owned(a.assignment!) })).toMatchObject({ memberEpoch: 2, assignment: null })
      expect(resolvedAt(h), String(interval)).toBe(refreshed ? first + 30_001 : first)
    }
  })

  it('two members of one regex share its topics; the last one leaving tombstones it', async () => {
    const topics = new Map([
      ['orders-eu', 2],
      ['orders-us', 2],
    ])
    const image = topicsImage(topics)
    const h = await harness({ topics: image })
    joinRegex(h, 'a', 'orders-.*')
    const b = joinRegex(h, 'b', 'orders-.*')
    expect(b.memberEpoch).toBe(3)
    const group = h.coordinator.consumerGroup(GROUP)!
    const size = (id: string) => [...group.targetAssignmentOf(id).values()].reduce((n, ps) => n + ps.size, 0)
    expect([size('a'), size('b')]).toEqual([2, 2])
    expect(group.numSubscribedMembers('orders-.*')).toBe(2)
    heartbeat(h, { memberId: 'a', memberEpoch: -1 })
    expect(group.resolvedRegularExpressions.has('orders-.*')).toBe(true)
    heartbeat(h, { memberId: 'b', memberEpoch: -1 })
    expect(group.resolvedRegularExpressions.has('orders-.*')).toBe(false)
  })

  it('topics the member may not DESCRIBE are left out of what its regex matches', async () => {
    const topics = new Map([
      ['orders-eu', 2],
      ['orders-secret', 2],
    ])
    const image = topicsImage(topics)
    const h = await harness({ topics: image })
    const r = joinRegex(h, 'a', 'orders-.*', { mayDescribeTopic: (t) => t !== 'orders-secret' })
    expect(named(h, r.assignment, image)).toEqual(['orders-eu-0', 'orders-eu-1'])
  })

  it('the resolved regex is a ConsumerGroupRegularExpression record: a restart brings it back', async () => {
    const topics = new Map([['orders-eu', 3]])
    const image = topicsImage(topics)
    let h = await harness({ topics: image })
    joinRegex(h, 'a', 'orders-.*')
    await h.coordinator.offsets.idle()
    const before = h.coordinator.consumerGroup(GROUP)!
    const snapshot = { members: [...before.members.values()], regexes: new Map(before.resolvedRegularExpressions), target: new Map(before.targetAssignment) }
    h = await h.restart()
    const after: ConsumerGroup = h.coordinator.consumerGroup(GROUP)!
    expect([...after.members.values()]).toEqual(snapshot.members)
    expect(after.members.get('a')!.subscribedTopicRegex).toBe('orders-.*')
    expect(after.resolvedRegularExpressions).toEqual(snapshot.regexes)
    expect(after.targetAssignment).toEqual(snapshot.target)
    expect(after.state()).toBe('Stable')
    // The record's tombstone removes it on replay.
    const groups = new Map([[GROUP, after]])
    const tombstone = regularExpressionRecord(GROUP, 'orders-.*', null)
    replayConsumerGroupRecord(groups, tombstone.key, tombstone.value)
    expect(after.resolvedRegularExpressions.size).toBe(0)
  })
})
