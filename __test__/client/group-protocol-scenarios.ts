/**
 * The Consumer's group scenarios in either group.protocol (classic, or consumer: KIP-848), run
 * against ferrolog (consumer-group-protocol.test.ts) and Apache Kafka 4.4
 * (consumer-group-protocol-kafka.test.ts), with a log of every member's assignment taken from
 * its rebalance callbacks:
 *
 * - three members over 12 partitions joining and leaving: every record read exactly once, the
 *   group's commits at the log ends, and no partition owned by two members at any moment;
 * - a member in a child process SIGKILLed: its partitions move to the others after the session
 *   timeout, every record is read (those after its last commit twice, as a crash allows), and no
 *   partition is given to a live member while another live member owns it;
 * - with group.protocol=consumer: group.remote.assignor, static membership (group.instance.id),
 *   a member away from poll longer than max.poll.interval.ms, the member epoch on commits, and a
 *   SubscriptionPattern the coordinator resolves, with groupMetadata().
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { expect } from 'vitest'
import { Consumer, type ConsumerConstructorOptions } from '../../ts/client/consumer.js'
import { CommitRequestManager } from '../../ts/client/commit-request-manager.js'
import { CoordinatorRequestManager } from '../../ts/client/coordinator-request-manager.js'
import { CommitFailedError, KafkaClientError } from '../../ts/client/errors.js'
import type { TopicPartition } from '../../ts/client/fetch-session-handler.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { SubscriptionPattern } from '../../ts/client/subscription-pattern.js'
import type { RequestManagers } from '../../ts/client/request-managers.js'
import { consumerGroupDescribeCodec } from '../../ts/protocol/apis/consumer-group-describe.js'
import { CoordinatorType, findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import type { DescribedGroup } from '../../ts/protocol/messages/consumer-group-describe-response.js'
import { createTopic, endOffsets, produceNumbered } from './consumer-scenarios.js'

export type Protocol = 'classic' | 'consumer'

/** Quick rebalances: the classic protocol's session settings are the client's, KIP-848's the broker's. */
export function groupOptions(protocol: Protocol): Partial<ConsumerConstructorOptions> {
  const common = { 'max.poll.interval.ms': 30_000, 'fetch.max.wait.ms': 200, 'auto.offset.reset': 'earliest' }
  return protocol === 'classic' ? { ...common, 'session.timeout.ms': 10_000, 'heartbeat.interval.ms': 200 } : { ...common, 'group.protocol': 'consumer' }
}

/** The broker settings that make a KIP-848 session 10 s and its heartbeat interval 500 ms. */
export const FERROLOG_GROUP_CONFIG = {
  'group.min.session.timeout.ms': '1000',
  'group.consumer.min.session.timeout.ms': '6000',
  'group.consumer.session.timeout.ms': '10000',
  'group.consumer.min.heartbeat.interval.ms': '500',
  'group.consumer.heartbeat.interval.ms': '500',
}
export const KAFKA_GROUP_SETTINGS = [
  'group.consumer.min.session.timeout.ms=6000',
  'group.consumer.session.timeout.ms=10000',
  'group.consumer.min.heartbeat.interval.ms=500',
  'group.consumer.heartbeat.interval.ms=500',
]

export interface OwnershipEvent {
  /** When it happened: ms since the epoch with sub-ms precision (comparable across processes). */
  at: number
  member: string
  kind: 'assigned' | 'revoked' | 'lost' | 'killed'
  partitions: string[]
}

const now = () => performance.timeOrigin + performance.now()

/**
 * Every member's ownership events. A child's events reach us through a pipe, later than they
 * happened: each carries its time, and the log is read in the order of the times.
 */
export class AssignmentLog {
  private readonly list: OwnershipEvent[] = []

  get events(): OwnershipEvent[] {
    return [...this.list].sort((a, b) => a.at - b.at)
  }

  add(member: string, kind: OwnershipEvent['kind'], partitions: TopicPartition[] | string[], at = now()): void {
    this.list.push({ at, member, kind, partitions: partitions.map((p) => (typeof p === 'string' ? p : `${p.topic}-${p.partition}`)) })
  }

  listeners(member: string): Pick<ConsumerConstructorOptions, 'onPartitionsAssigned' | 'onPartitionsRevoked' | 'onPartitionsLost'> {
    return {
      onPartitionsAssigned: (tps) => this.add(member, 'assigned', tps),
      onPartitionsRevoked: (tps) => this.add(member, 'revoked', tps),
      onPartitionsLost: (tps) => this.add(member, 'lost', tps),
    }
  }

  /** Each partition given to a member while another one still owned it. */
  overlaps(): string[] {
    const owner = new Map<string, string>()
    const out: string[] = []
    for (const e of this.events) {
      for (const p of e.partitions) {
        const o = owner.get(p)
        if (e.kind === 'assigned') {
          if (o !== undefined && o !== e.member) out.push(`${p} assigned to ${e.member} while ${o} owned it`)
          owner.set(p, e.member)
        } else if (o === e.member) owner.delete(p)
      }
    }
    return out
  }

  /** What `member` owns after every event so far. */
  owned(member: string): Set<string> {
    const owned = new Set<string>()
    for (const e of this.events) {
      if (e.member !== member) continue
      for (const p of e.partitions) {
        if (e.kind === 'assigned') owned.add(p)
        else owned.delete(p)
      }
    }
    return owned
  }
}

export const until = async (check: () => boolean, what: string, limitMs = 60_000): Promise<void> => {
  const end = Date.now() + limitMs
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const idOf = (value: Buffer | null) => value!.toString().replace(/\.+$/, '')

async function committedAtLogEnds(bootstrap: string, groupId: string, topic: string): Promise<void> {
  const ends = await endOffsets(bootstrap, topic, 12)
  const checker = new Consumer({ bootstrapServers: bootstrap, groupId })
  try {
    const committed = await checker.committed(Array.from({ length: 12 }, (_, partition) => ({ topic, partition })))
    expect([...Array(12).keys()].map((p) => committed.get(`${topic}\u0000${p}`))).toEqual(ends)
  } finally {
    await checker.close()
  }
}

/**
 * A starts, B joins after a fifth of the records, C after two fifths, A leaves (close: commit,
 * leave) after three fifths, B and C read the rest.
 */
export async function joinLeaveScenario(bootstrap: string, topic: string, protocol: Protocol, count: number, extra: Partial<ConsumerConstructorOptions> = {}): Promise<AssignmentLog> {
  await createTopic(bootstrap, topic, 12)
  await produceNumbered(bootstrap, topic, 'r', count)
  const groupId = `${topic}-group`
  const log = new AssignmentLog()
  const seen = new Map<string, number>()
  const perMember = [0, 0, 0]
  const consumers: Consumer[] = []
  const loops: Promise<void>[] = []
  const names = ['A', 'B', 'C']
  const start = (i: number) => {
    const c = new Consumer({ bootstrapServers: bootstrap, groupId, ...groupOptions(protocol), 'max.poll.records': 100, 'max.partition.fetch.bytes': 16_384, ...log.listeners(names[i]!), ...extra })
    c.subscribe([topic])
    consumers[i] = c
    loops[i] = (async () => {
      for await (const batch of c) {
        for (const r of batch.records) seen.set(idOf(r.value), (seen.get(idOf(r.value)) ?? 0) + 1)
        perMember[i]! += batch.records.length
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    })()
  }
  start(0)
  await until(() => seen.size >= count / 5, 'a fifth of the records')
  start(1)
  await until(() => seen.size >= (2 * count) / 5 && perMember[1]! > 0, 'B to read')
  start(2)
  await until(() => seen.size >= (3 * count) / 5 && perMember[2]! > 0, 'C to read')
  await consumers[0]!.close()
  await loops[0]
  await until(() => seen.size >= count, 'every record', 90_000)
  await Promise.all([consumers[1]!.close(), consumers[2]!.close()])
  await Promise.all(loops)

  const missing: number[] = []
  const duplicated: number[] = []
  for (let i = 0; i < count; i++) {
    const n = seen.get(`r-${i}`) ?? 0
    if (n === 0) missing.push(i)
    if (n > 1) duplicated.push(i)
  }
  expect(missing).toEqual([])
  expect(duplicated).toEqual([])
  expect(perMember.every((n) => n > 0)).toBe(true)
  expect(log.overlaps()).toEqual([])
  // Everyone took part: A held all 12 first, B and C together all 12 at the end.
  expect(log.events.find((e) => e.member === 'A' && e.kind === 'assigned')!.partitions.length).toBe(12)
  // Closed: every partition given up (onPartitionsRevoked at close, in both protocols as in Java).
  expect(['A', 'B', 'C'].map((m) => log.owned(m).size)).toEqual([0, 0, 0])
  await committedAtLogEnds(bootstrap, groupId, topic)
  return log
}

const CHILD = join(__dirname, 'group-member-child.mjs')

/**
 * Two members here and one in a child process read 12 partitions; the child is SIGKILLed while it
 * holds partitions: after the session timeout the others take them and read every record.
 */
export async function killedMemberScenario(bootstrap: string, topic: string, protocol: Protocol, count: number): Promise<{ log: AssignmentLog; movedAfterMs: number }> {
  await createTopic(bootstrap, topic, 12)
  await produceNumbered(bootstrap, topic, 'k', count)
  const groupId = `${topic}-group`
  const log = new AssignmentLog()
  const seen = new Set<string>()
  let childRead = 0
  const childOptions = JSON.stringify({ bootstrapServers: bootstrap, groupId, ...groupOptions(protocol), 'max.poll.records': 50, 'max.partition.fetch.bytes': 8192, 'auto.commit.interval.ms': 500 })
  const child = spawn(process.execPath, [CHILD, topic, childOptions], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  let pending = ''
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString()
    const lines = pending.split('\n')
    pending = lines.pop()!
    for (const line of lines) {
      const [kind, rest = '', at = '0'] = line.split(' ')
      const items = rest === '' ? [] : rest.split(',')
      if (kind === 'records') {
        for (const id of items) seen.add(id)
        childRead += items.length
      } else if (kind === 'assigned' || kind === 'revoked' || kind === 'lost') log.add('child', kind, items, Number(at))
    }
  })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const consumers: Consumer[] = []
  const loops: Promise<void>[] = []
  try {
    await until(() => log.owned('child').size === 12, `the child to hold every partition (${stderr})`)
    for (const name of ['A', 'B']) {
      const c = new Consumer({ bootstrapServers: bootstrap, groupId, ...groupOptions(protocol), 'max.poll.records': 50, 'max.partition.fetch.bytes': 8192, ...log.listeners(name) })
      c.subscribe([topic])
      consumers.push(c)
      loops.push(
        (async () => {
          for await (const batch of c) {
            for (const r of batch.records) seen.add(idOf(r.value))
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        })(),
      )
    }
    await until(() => log.owned('child').size === 4 && log.owned('A').size === 4 && log.owned('B').size === 4 && childRead > 0, 'three members with four partitions each')
    const held = [...log.owned('child')]
    child.kill('SIGKILL')
    const killedAt = Date.now()
    await exited
    log.add('child', 'killed', held)
    await until(() => log.owned('A').size + log.owned('B').size === 12, "the child's partitions to move", 60_000)
    const movedAfterMs = Date.now() - killedAt
    await until(() => seen.size >= count, 'every record', 90_000)
    const missing = [...Array(count).keys()].filter((i) => !seen.has(`k-${i}`))
    expect(missing).toEqual([])
    expect(log.overlaps()).toEqual([])
    return { log, movedAfterMs }
  } finally {
    child.kill('SIGKILL')
    await Promise.all(consumers.map((c) => c.close()))
    await Promise.all(loops)
  }
}

/** The group as its coordinator describes it (ConsumerGroupDescribe, KIP-848 groups). */
export async function describeConsumerGroup(bootstrap: string, groupId: string): Promise<DescribedGroup> {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await client.refreshMetadata([])
    const found = await client.request(client.candidateNodes()[0]!, findCoordinatorCodec, { key: '', keyType: CoordinatorType.GROUP, coordinatorKeys: [groupId] })
    const res = await client.request(found.coordinators[0]!.nodeId, consumerGroupDescribeCodec, { groupIds: [groupId], includeAuthorizedOperations: false })
    return res.groups[0]!
  } finally {
    await client.close()
  }
}

/** Polls `c` in a loop until the returned stop is called; an error ends the loop and is kept. */
function pump(c: Consumer, errors: Map<Consumer, unknown>): () => Promise<void> {
  let stopped = false
  const done = (async () => {
    while (!stopped) {
      try {
        await c.poll(100)
      } catch (err) {
        errors.set(c, err)
        return
      }
    }
  })()
  return async () => {
    stopped = true
    await done
  }
}

/**
 * group.remote.assignor names the coordinator's assignor (ConsumerGroupDescribe shows it); one
 * the coordinator does not have is fatal: poll throws UNSUPPORTED_ASSIGNOR.
 */
export async function remoteAssignorScenario(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, 4)
  const errors = new Map<Consumer, unknown>()
  const groupId = `${topic}-group`
  const members = ['a', 'b'].map(() => new Consumer({ bootstrapServers: bootstrap, groupId, ...groupOptions('consumer'), 'group.remote.assignor': 'range' }))
  const stops = members.map((c) => (c.subscribe([topic]), pump(c, errors)))
  try {
    await until(() => members.every((c) => c.assignment().length === 2), 'two members with two partitions each')
    const group = await describeConsumerGroup(bootstrap, groupId)
    expect([group.errorCode, group.assignorName, group.groupState, group.members.length]).toEqual([0, 'range', 'Stable', 2])
    // Range over one topic: each member holds a run of partitions.
    const sorted = members
      .map((c) =>
        c
          .assignment()
          .map((tp) => tp.partition)
          .sort((x, y) => x - y),
      )
      .sort((x, y) => x[0]! - y[0]!)
    expect(sorted).toEqual([
      [0, 1],
      [2, 3],
    ])
    const bogus = new Consumer({ bootstrapServers: bootstrap, groupId: `${groupId}-bogus`, ...groupOptions('consumer'), 'group.remote.assignor': 'bogus' })
    bogus.subscribe([topic])
    const stopBogus = pump(bogus, errors)
    await until(() => errors.has(bogus), 'the unknown assignor to fail')
    await stopBogus()
    await bogus.close()
    expect((errors.get(bogus) as { code?: string }).code).toBe('UNSUPPORTED_ASSIGNOR')
  } finally {
    await Promise.all(stops.map((s) => s()))
    await Promise.all(members.map((c) => c.close()))
  }
}

/**
 * Static membership with group.protocol=consumer: a static member that closes leaves with epoch
 * -2, so the coordinator keeps its partitions; restarted within the session it gets them back
 * and the other member sees no rebalance. A second consumer with the instance id of a live
 * member is refused: its poll throws UNRELEASED_INSTANCE_ID.
 */
export async function staticMemberScenario(bootstrap: string, topic: string): Promise<AssignmentLog> {
  await createTopic(bootstrap, topic, 4)
  const groupId = `${topic}-group`
  const log = new AssignmentLog()
  const errors = new Map<Consumer, unknown>()
  const make = (instance: string) => new Consumer({ bootstrapServers: bootstrap, groupId, 'group.instance.id': instance, ...groupOptions('consumer'), ...log.listeners(instance) })
  const c1 = make('i1')
  c1.subscribe([topic])
  let stop1 = pump(c1, errors)
  const c2 = make('i2')
  c2.subscribe([topic])
  const stop2 = pump(c2, errors)
  let c1b: Consumer | null = null
  let c2b: Consumer | null = null
  try {
    await until(() => log.owned('i1').size === 2 && log.owned('i2').size === 2, 'both hold two partitions')
    const i1Partitions = [...log.owned('i1')].sort()
    const i2Events = log.events.filter((e) => e.member === 'i2').length
    await stop1()
    await c1.close()
    expect(log.owned('i1').size).toBe(0)
    const described = await describeConsumerGroup(bootstrap, groupId)
    // Still a member (epoch -2 keeps it for its session), its partitions still assigned to it.
    expect(described.members.map((m) => m.instanceId).sort()).toEqual(['i1', 'i2'])
    c1b = make('i1')
    c1b.subscribe([topic])
    stop1 = pump(c1b, errors)
    await until(() => log.owned('i1').size === 2, 'the restarted i1 assigned')
    expect([...log.owned('i1')].sort()).toEqual(i1Partitions)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(log.events.filter((e) => e.member === 'i2').length).toBe(i2Events)
    // The same instance id as a live member: refused.
    c2b = make('i2')
    c2b.subscribe([topic])
    const stop2b = pump(c2b, errors)
    await until(() => errors.has(c2b!), 'the second i2 refused')
    await stop2b()
    expect((errors.get(c2b) as { code?: string }).code).toBe('UNRELEASED_INSTANCE_ID')
    expect(errors.has(c2) || errors.has(c1b)).toBe(false)
    expect(log.overlaps()).toEqual([])
    return log
  } finally {
    await stop1()
    await stop2()
    await Promise.all([c1.close(), c2.close(), c1b?.close(), c2b?.close()])
  }
}

/**
 * max.poll.interval.ms with group.protocol=consumer: A stalls in eachBatch past it (3 s); its
 * heartbeat leaves the group (Java's "consumer poll timeout has expired"), so B takes all four
 * partitions while A still stalls; A's commit then fails (CommitFailedError UNKNOWN_MEMBER_ID: it
 * is not a member any more), its partitions are lost at its next poll (onPartitionsLost, no
 * revoke), which rejoins; the two share the partitions again and every record is read.
 */
export async function staleMemberScenario(bootstrap: string, topic: string): Promise<AssignmentLog> {
  await createTopic(bootstrap, topic, 4)
  await produceNumbered(bootstrap, topic, 'p', 10_000)
  const groupId = `${topic}-group`
  const log = new AssignmentLog()
  const seen = new Set<string>()
  const options = { bootstrapServers: bootstrap, groupId, ...groupOptions('consumer'), 'max.poll.interval.ms': 3000, 'max.poll.records': 20, 'max.partition.fetch.bytes': 4096 }
  const a = new Consumer({ ...options, ...log.listeners('A') })
  const b = new Consumer({ ...options, ...log.listeners('B') })
  let stalled = false
  let commitError: unknown = null
  let bLoop: Promise<void> | null = null
  a.subscribe([topic])
  const aLoop = a.run({
    eachBatch: async (batch) => {
      for (const r of batch.records) seen.add(idOf(r.value))
      if (bLoop === null) {
        b.subscribe([topic])
        bLoop = (async () => {
          for await (const batch of b) {
            for (const r of batch.records) seen.add(idOf(r.value))
            await new Promise((resolve) => setTimeout(resolve, 10))
          }
        })()
      }
      if (!stalled && log.owned('A').size === 2 && log.owned('B').size === 2) {
        stalled = true
        try {
          await until(() => log.owned('B').size === 4, 'B to take every partition while A stalls', 60_000)
          await a.commit()
        } catch (err) {
          commitError = err
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    },
  })
  try {
    await until(() => stalled && commitError !== null, 'A to stall and try to commit', 90_000)
    expect(commitError).toBeInstanceOf(CommitFailedError)
    expect((commitError as CommitFailedError).code).toBe('UNKNOWN_MEMBER_ID')
    await until(() => log.owned('A').size === 2 && log.owned('B').size === 2, 'A to rejoin', 60_000)
    const aEvents = log.events.filter((e) => e.member === 'A')
    const lostAt = aEvents.findIndex((e) => e.kind === 'lost')
    expect(aEvents[lostAt]?.partitions.length).toBe(2)
    // Lost, not revoked, after the stall: the next events of A are assignments.
    expect(aEvents.slice(lostAt + 1).every((e) => e.kind === 'assigned')).toBe(true)
    await until(() => seen.size >= 10_000, 'every record', 90_000)
    // A's stalled partitions went to B while A was out of the group: B owned them after A lost them
    // in the group's eyes, which the log cannot show (A's callback runs later, at its next poll).
    return log
  } finally {
    await Promise.all([a.close(), b.close()])
    await aLoop
    await bLoop
  }
}

/**
 * OffsetCommit and OffsetFetch carry the member id and epoch (v9): with an epoch older than the
 * member's the coordinator answers STALE_MEMBER_EPOCH. An application's commit then fails with
 * CommitFailedError STALE_MEMBER_EPOCH; the commit before a revocation, and OffsetFetch, try
 * again with the epoch known by then and succeed.
 */
export async function memberEpochCommitScenario(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, 2)
  const groupId = `${topic}-group`
  const errors = new Map<Consumer, unknown>()
  const c = new Consumer({ bootstrapServers: bootstrap, groupId, ...groupOptions('consumer') })
  c.subscribe([topic])
  const stop = pump(c, errors)
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await until(() => c.assignment().length === 2, 'the member to hold both partitions')
    const m = (c as unknown as { coordinator: RequestManagers }).coordinator.membershipManager
    expect(m.memberEpoch).toBeGreaterThan(0)
    const coordinators = new CoordinatorRequestManager(client, groupId, 100)
    const options = { groupInstanceId: null, retryBackoffMs: 100, requireStable: false }
    const stale = () => ({ memberId: m.memberId, memberEpoch: m.memberEpoch - 1 })
    const deadline = () => Date.now() + 10_000
    const offset = (o: bigint) => [{ topic, partition: 0, offset: o }]
    const commits = new CommitRequestManager(client, coordinators, stale, options)
    const err = await commits.commit(offset(5n), deadline()).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CommitFailedError)
    expect((err as CommitFailedError).code).toBe('STALE_MEMBER_EPOCH')
    // The first attempt stale, the next with the member's epoch (a heartbeat brought it meanwhile).
    let attempts = 0
    const catchingUp = () => (attempts++ === 0 ? stale() : { memberId: m.memberId, memberEpoch: m.memberEpoch })
    await new CommitRequestManager(client, coordinators, catchingUp, options).commit(offset(7n), deadline(), true)
    expect(attempts).toBeGreaterThanOrEqual(2)
    attempts = 0
    const fetched = await new CommitRequestManager(client, coordinators, catchingUp, options).fetchCommittedOffsets([{ topic, partition: 0 }], deadline())
    expect(attempts).toBeGreaterThanOrEqual(2)
    expect(fetched.get(`${topic}\u00000`)).toBe(7n)
    // The member's own commit carries its epoch.
    await c.commit(offset(9n))
    expect((await c.committed([{ topic, partition: 0 }])).get(`${topic}\u00000`)).toBe(9n)
    expect(errors.size).toBe(0)
  } finally {
    await stop()
    await c.close()
    await client.close()
  }
}

/**
 * A SubscriptionPattern (KIP-848, resolved by the group coordinator in RE2 syntax): two members of
 * `<prefix>-.*` share `<prefix>-a` and never see `other-<prefix>`; `<prefix>-b` created while they
 * run reaches them (the coordinator resolves the regex again within about 10 s); every record read
 * once, no partition owned twice. groupMetadata() is each member as the coordinator describes it
 * (member id, member epoch as the generation). A bad regex fails the poll with
 * INVALID_REGULAR_EXPRESSION; the classic protocol refuses a SubscriptionPattern at subscribe.
 */
export async function brokerRegexScenario(bootstrap: string, prefix: string, count: number): Promise<void> {
  await createTopic(bootstrap, `${prefix}-a`, 3)
  await createTopic(bootstrap, `other-${prefix}`, 1)
  await produceNumbered(bootstrap, `${prefix}-a`, 'a', count)
  await produceNumbered(bootstrap, `other-${prefix}`, 'other', count)
  const groupId = `${prefix}-group`
  const log = new AssignmentLog()
  const seen = new Map<string, number>()
  const errors = new Map<Consumer, unknown>()
  const members = ['A', 'B'].map((name) => {
    const c = new Consumer({ bootstrapServers: bootstrap, groupId, ...groupOptions('consumer'), ...log.listeners(name) })
    c.subscribe(new SubscriptionPattern(`${prefix}-.*`))
    return c
  })
  const loops = members.map(async (c) => {
    try {
      for await (const batch of c) for (const r of batch.records) seen.set(idOf(r.value), (seen.get(idOf(r.value)) ?? 0) + 1)
    } catch (err) {
      errors.set(c, err)
    }
  })
  try {
    await until(() => seen.size >= count && members.every((c) => c.assignment().length > 0), `${prefix}-a read by both members`)
    // Each member as the coordinator knows it.
    const described = await describeConsumerGroup(bootstrap, groupId)
    for (const c of members) {
      const metadata = c.groupMetadata()
      const member = described.members.find((m) => m.memberId === metadata.memberId)
      expect(member, JSON.stringify(metadata)).toBeDefined()
      expect(metadata).toEqual({ groupId, generationId: member!.memberEpoch, memberId: member!.memberId, groupInstanceId: null })
    }
    expect(described.members.map((m) => m.subscribedTopicRegex)).toEqual([`${prefix}-.*`, `${prefix}-.*`])
    await createTopic(bootstrap, `${prefix}-b`, 3)
    await produceNumbered(bootstrap, `${prefix}-b`, 'b', count)
    await until(() => seen.size >= 2 * count, `${prefix}-b read too`, 60_000)
    const owned = new Set(members.flatMap((c) => c.assignment().map((tp) => `${tp.topic}-${tp.partition}`)))
    expect([...owned].sort()).toEqual([0, 1, 2].flatMap((p) => [`${prefix}-a-${p}`, `${prefix}-b-${p}`]).sort())
  } finally {
    await Promise.all(members.map((c) => c.close()))
    await Promise.all(loops)
  }
  expect([...errors.values()]).toEqual([])
  expect([...seen.keys()].filter((id) => id.startsWith('other-'))).toEqual([])
  expect([...seen.values()].filter((n) => n > 1)).toEqual([])
  expect(seen.size).toBe(2 * count)
  expect(log.overlaps()).toEqual([])

  const bad = new Consumer({ bootstrapServers: bootstrap, groupId: `${prefix}-bad`, ...groupOptions('consumer') })
  try {
    bad.subscribe(new SubscriptionPattern(`${prefix}-(`))
    const err = await (async () => {
      for (let i = 0; i < 100; i++) await bad.poll(100)
    })().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaClientError)
    expect((err as KafkaClientError).code).toBe('INVALID_REGULAR_EXPRESSION')
  } finally {
    await bad.close()
  }
  const classic = new Consumer({ bootstrapServers: bootstrap, groupId: `${prefix}-classic`, ...groupOptions('classic') })
  try {
    expect(() => classic.subscribe(new SubscriptionPattern(`${prefix}-.*`))).toThrow(/group.protocol=consumer/)
  } finally {
    await classic.close()
  }
}

/**
 * A live classic group upgraded and downgraded (group.consumer.migration.policy, bidirectional
 * by default): two classic members share 6 partitions; a member with group.protocol=consumer
 * joins (the group becomes a consumer group: ConsumerGroupDescribe lists the classic members with
 * KIP-1099's member type 0, the new one 1) and the three share them; it leaves (the group is
 * classic again: ConsumerGroupDescribe answers GROUP_ID_NOT_FOUND) and the two take all of them
 * back. Every record is read; no partition is owned by two members at once.
 */
export async function migrationScenario(bootstrap: string, topic: string, count: number): Promise<void> {
  await createTopic(bootstrap, topic, 6)
  await produceNumbered(bootstrap, topic, 'r', count)
  const groupId = `${topic}-group`
  const log = new AssignmentLog()
  const seen = new Set<string>()
  const members = new Map<string, { consumer: Consumer; loop: Promise<void> }>()
  const start = (name: string, protocol: Protocol) => {
    const consumer = new Consumer({ bootstrapServers: bootstrap, groupId, 'client.id': name, ...groupOptions(protocol), ...log.listeners(name) })
    consumer.subscribe([topic])
    const loop = (async () => {
      for await (const batch of consumer) for (const r of batch.records) seen.add(idOf(r.value))
    })()
    members.set(name, { consumer, loop })
  }
  const stop = async (name: string) => {
    const m = members.get(name)!
    members.delete(name)
    await m.consumer.close()
    await m.loop
  }
  const shared = (what: string) => until(() => [...members.keys()].every((m) => log.owned(m).size > 0) && [...members.keys()].reduce((n, m) => n + log.owned(m).size, 0) === 6, what, 90_000)
  const describe = async (settled: (g: DescribedGroup) => boolean): Promise<DescribedGroup> => {
    for (;;) {
      const g = await describeConsumerGroup(bootstrap, groupId)
      if (settled(g)) return g
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  try {
    start('A', 'classic')
    start('B', 'classic')
    await shared('the classic members to share the partitions')
    expect((await describeConsumerGroup(bootstrap, groupId)).errorCode).toBe(69) // GROUP_ID_NOT_FOUND: a classic group
    start('K', 'consumer')
    await shared('the three members to share the partitions')
    const upgraded = await describe((g) => g.errorCode === 0 && g.groupState === 'Stable' && g.members.length === 3)
    expect(upgraded.members.map((m) => [m.clientId, m.memberType]).sort()).toEqual([
      ['A', 0],
      ['B', 0],
      ['K', 1],
    ])
    await stop('K')
    await shared('the classic members to take every partition back')
    await describe((g) => g.errorCode === 69)
    await until(() => seen.size >= count, 'every record', 90_000)
  } finally {
    for (const name of [...members.keys()]) await stop(name)
  }
  expect([...Array(count).keys()].filter((i) => !seen.has(`r-${i}`))).toEqual([])
  expect(log.overlaps()).toEqual([])
}
