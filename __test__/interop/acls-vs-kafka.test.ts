/**
 * Authorization with Kafka's StandardAuthorizer semantics, ferrolog against Apache Kafka 4.4
 * (tools/kafka/run-broker.sh) in the same test: the same ACLs, set with Kafka's own kafka-acls
 * (org.apache.kafka.tools.AclCommand), then the same raw requests, with the same answers. As in
 * Kafka's EndToEndAuthorizationTest family: produce and fetch refused without WRITE/READ and
 * allowed with them, a PREFIXED DENY over a LITERAL ALLOW, topic creation needing CREATE, a group
 * needing READ, a transactional id needing WRITE, DescribeConfigs/IncrementalAlterConfigs,
 * DeleteRecords and DeleteTopics needing their operations, Metadata leaving out what may not be
 * described, KIP-430 bit fields, and a super user allowed past a DENY.
 *
 * Both brokers take PLAINTEXT connections (principal User:ANONYMOUS) with
 * allow.everyone.if.no.acl.found=true, so that Kafka's own controller and broker (ANONYMOUS too)
 * keep talking; ANONYMOUS is given ALTER, DESCRIBE and CLUSTER_ACTION on the cluster, and the
 * resources under test are governed by ACLs naming User:alice, so that ANONYMOUS is refused on
 * them until ACLs allow it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { deleteRecordsCodec } from '../../ts/protocol/apis/delete-records.js'
import { deleteTopicsCodec } from '../../ts/protocol/apis/delete-topics.js'
import { createAclsCodec } from '../../ts/protocol/apis/create-acls.js'
import { deleteAclsCodec } from '../../ts/protocol/apis/delete-acls.js'
import { describeAclsCodec } from '../../ts/protocol/apis/describe-acls.js'
import { describeClusterCodec } from '../../ts/protocol/apis/describe-cluster.js'
import { describeConfigsCodec } from '../../ts/protocol/apis/describe-configs.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { incrementalAlterConfigsCodec } from '../../ts/protocol/apis/incremental-alter-configs.js'
import { initProducerIdCodec } from '../../ts/protocol/apis/init-producer-id.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { offsetCommitCodec } from '../../ts/protocol/apis/offset-commit.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { defaultCreateTopicsRequest } from '../../ts/protocol/messages/create-topics-request.js'
import { defaultDeleteTopicsRequest } from '../../ts/protocol/messages/delete-topics-request.js'
import { defaultDescribeClusterRequest } from '../../ts/protocol/messages/describe-cluster-request.js'
import { defaultDescribeConfigsRequest } from '../../ts/protocol/messages/describe-configs-request.js'
import { defaultFetchRequest } from '../../ts/protocol/messages/fetch-request.js'
import { defaultMetadataRequest } from '../../ts/protocol/messages/metadata-request.js'
import { defaultOffsetCommitRequest } from '../../ts/protocol/messages/offset-commit-request.js'
import { STANDARD_AUTHORIZER_CLASS } from '../../ts/security/authorizer/standard-authorizer.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'

const ACL_COMMAND = 'org.apache.kafka.tools.AclCommand'
const BROKERS = ['kafka', 'ferrolog'] as const
type Target = (typeof BROKERS)[number]
const ZERO_UUID = Buffer.alloc(16)

let kafkaDir: string
let ferrologDir: string
let ferrolog: Broker | undefined
const ports: Record<Target, number> = { kafka: 0, ferrolog: 0 }
const wires: Partial<Record<Target, KafkaWire>> = {}
const props = { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, 'allow.everyone.if.no.acl.found': 'true' }

beforeAll(async () => {
  fetchKafkaJars()
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-acls-'))
  ports.kafka = kafkaBrokerPort(
    await runKafkaBroker(
      kafkaDir,
      Object.entries(props).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
    ),
  )
  // Its own directory: the helpers' tempDir is removed after each test, before afterAll stops the broker.
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-acls-'))
  ferrolog = await startBroker({ dataDir: ferrologDir, props: { ...props, 'group.initial.rebalance.delay.ms': '0' } })
  ports.ferrolog = ferrolog.port
  for (const b of BROKERS) wires[b] = new KafkaWire(await connectTo(ports[b]), 'acls-test')
}, 240_000)

afterAll(async () => {
  for (const b of BROKERS) wires[b]?.close()
  try {
    await ferrolog?.stop()
  } finally {
    // Kafka stops even when ferrolog's stop failed.
    if (kafkaDir) {
      stopKafkaBroker(kafkaDir)
      rmSync(kafkaDir, { recursive: true, force: true })
    }
    if (ferrologDir) rmSync(ferrologDir, { recursive: true, force: true })
  }
}, 60_000)

const wire = (b: Target) => wires[b]!

/** The ACLs the broker enforces now (DescribeAcls ANY). */
async function aclCount(b: Target): Promise<number> {
  const res = await wire(b).send(describeAclsCodec, 3, {
    resourceTypeFilter: 1,
    resourceNameFilter: null,
    patternTypeFilter: 1,
    principalFilter: null,
    hostFilter: null,
    operation: 1,
    permissionType: 1,
  })
  return res.resources.reduce((n, r) => n + r.acls.length, 0)
}

/**
 * kafka-acls with `args` on both brokers; returns each one's output once the broker enforces the
 * change (Kafka's broker applies what its controller committed a moment later).
 */
async function kafkaAcls(args: string[], change: number): Promise<Record<Target, string>> {
  const out = {} as Record<Target, string>
  for (const b of BROKERS) {
    const before = await aclCount(b)
    out[b] = await kafkaToolOk(ports[b], ACL_COMMAND, args)
    for (let i = 0; (await aclCount(b)) !== before + change; i++) {
      if (i === 100) throw new Error(`${b}: the ACLs did not change by ${change} after kafka-acls ${args.join(' ')}`)
      await sleep(100)
    }
  }
  return out
}

/** `ask` on a new connection: its answer, or 'closed' when the broker closes the connection instead. */
async function probe<T>(b: Target, ask: (w: KafkaWire) => Promise<T>): Promise<T | 'closed'> {
  const w = new KafkaWire(await connectTo(ports[b]), 'acls-probe')
  try {
    return await Promise.race([ask(w), new Promise<'closed'>((resolve) => w.socket.once('close', () => resolve('closed')))])
  } finally {
    w.close()
  }
}

/** The same question to both brokers: their answers, expected equal. */
async function both<T>(ask: (b: Target) => Promise<T>): Promise<T> {
  const kafka = await ask('kafka')
  const ours = await ask('ferrolog')
  expect(ours).toEqual(kafka)
  return ours
}

const createTopic = (b: Target, name: string) =>
  wire(b)
    .send(createTopicsCodec, 7, { ...defaultCreateTopicsRequest(), timeoutMs: 30_000, topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }] })
    .then((r) => r.topics[0].errorCode)

const metadata = (b: Target, names: string[] | null) =>
  wire(b)
    .send(metadataCodec, 12, {
      ...defaultMetadataRequest(),
      topics: names === null ? null : names.map((name) => ({ name, topicId: ZERO_UUID })),
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: true,
    })
    .then((r) => r.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, ops: t.topicAuthorizedOperations })))

async function produce(b: Target, topic: string): Promise<number> {
  const records = buildBatch([{ key: null, value: Buffer.from('v'), headers: [] }])
  for (let attempt = 0; ; attempt++) {
    const res = await wire(b).send(produceCodec, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] })
    const errorCode = res.responses[0].partitionResponses[0].errorCode
    // A topic just created on Kafka: its leader is known a moment later.
    if ((errorCode !== 3 && errorCode !== 6) || attempt === 50) return errorCode
    await sleep(100)
  }
}

const fetch = (b: Target, topic: string) =>
  wire(b)
    .send(fetchCodec, 12, {
      ...defaultFetchRequest(),
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      topics: [
        {
          topic,
          topicId: ZERO_UUID,
          partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20, replicaDirectoryId: ZERO_UUID }],
        },
      ],
    })
    .then((r) => r.responses[0].partitions[0].errorCode)

/** COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: Kafka creating its internal topics on first use. */
const COORDINATOR_NOT_READY = new Set([14, 15, 16])

/** `ask` again while the coordinator is not ready (as a client retries). */
async function retried(ask: () => Promise<number>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const errorCode = await ask()
    if (!COORDINATOR_NOT_READY.has(errorCode) || attempt === 150) return errorCode
    await sleep(200)
  }
}

const findCoordinator = (b: Target, key: string, keyType: 0 | 1) =>
  retried(() =>
    wire(b)
      .send(findCoordinatorCodec, 4, { key: '', keyType, coordinatorKeys: [key] })
      .then((r) => r.coordinators[0].errorCode),
  )
const findGroupCoordinator = (b: Target, group: string) => findCoordinator(b, group, 0)

const commitOffset = (b: Target, group: string, topic: string) =>
  retried(() =>
    wire(b)
      .send(offsetCommitCodec, 8, {
        ...defaultOffsetCommitRequest(),
        groupId: group,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        topics: [{ name: topic, topicId: ZERO_UUID, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }],
      })
      .then((r) => r.topics[0].partitions[0].errorCode),
  )

const initTransactional = (b: Target, transactionalId: string) =>
  retried(() =>
    wire(b)
      .send(initProducerIdCodec, 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false })
      .then((r) => r.errorCode),
  )

const describeTopicConfigs = (b: Target, topic: string) =>
  wire(b)
    .send(describeConfigsCodec, 4, { ...defaultDescribeConfigsRequest(), resources: [{ resourceType: 2, resourceName: topic, configurationKeys: ['retention.ms'] }] })
    .then((r) => r.results[0].errorCode)

const alterTopicConfig = (b: Target, topic: string) =>
  wire(b)
    .send(incrementalAlterConfigsCodec, 1, { validateOnly: false, resources: [{ resourceType: 2, resourceName: topic, configs: [{ name: 'retention.ms', configOperation: 0, value: '3600000' }] }] })
    .then((r) => r.responses[0].errorCode)

const deleteRecords = (b: Target, topic: string) =>
  wire(b)
    .send(deleteRecordsCodec, 2, { timeoutMs: 30_000, topics: [{ name: topic, partitions: [{ partitionIndex: 0, offset: 1n }] }] })
    .then((r) => r.topics[0].partitions[0].errorCode)

const deleteTopic = (b: Target, topic: string) =>
  wire(b)
    .send(deleteTopicsCodec, 6, { ...defaultDeleteTopicsRequest(), timeoutMs: 30_000, topics: [{ name: topic, topicId: ZERO_UUID }] })
    .then((r) => r.responses[0].errorCode)

const clusterOperations = (b: Target) =>
  wire(b)
    .send(describeClusterCodec, 1, { ...defaultDescribeClusterRequest(), includeClusterAuthorizedOperations: true, endpointType: 1 })
    .then((r) => r.clusterAuthorizedOperations)

const anonymous = (op: string, resource: string[]) => ['--add', '--allow-principal', 'User:ANONYMOUS', '--operation', op, ...resource]
const sortedLines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .sort()

describe('ACLs as Kafka enforces them, side by side', () => {
  it('the EndToEndAuthorizationTest cases: the same ACLs, the same answers', async () => {
    // ANONYMOUS may manage ACLs (ALTER, DESCRIBE on the cluster) and, on Kafka, keep its own
    // controller and broker talking (CLUSTER_ACTION); nothing else on the cluster.
    const added = await kafkaAcls(['--add', '--allow-principal', 'User:ANONYMOUS', '--operation', 'Alter', '--operation', 'Describe', '--operation', 'ClusterAction', '--cluster'], 3)
    expect(sortedLines(added.ferrolog)).toEqual(sortedLines(added.kafka))
    // The resources under test are governed: alice's ACLs make everyone else refused on them.
    await kafkaAcls(['--add', '--allow-principal', 'User:alice', '--operation', 'All', '--topic', 'acl-', '--resource-pattern-type', 'prefixed'], 1)
    await kafkaAcls(['--add', '--allow-principal', 'User:alice', '--operation', 'Read', '--group', 'acl-', '--resource-pattern-type', 'prefixed'], 1)
    await kafkaAcls(['--add', '--allow-principal', 'User:alice', '--operation', 'Write', '--transactional-id', 'acl-', '--resource-pattern-type', 'prefixed'], 1)

    // KIP-430: the cluster operations ANONYMOUS has: ALTER, DESCRIBE, CLUSTER_ACTION.
    expect(await both(clusterOperations)).toBe((1 << 7) | (1 << 8) | (1 << 9))

    // CreateTopics: no CREATE on the cluster nor the topic; a topic no ACL names is open.
    expect(await both((b) => createTopic(b, 'acl-t'))).toBe(29)
    expect(await both((b) => createTopic(b, 'open-t'))).toBe(0)
    await kafkaAcls([...anonymous('Create', ['--topic', 'acl-t'])], 1)
    expect(await both((b) => createTopic(b, 'acl-t'))).toBe(0)

    // Metadata: CREATE does not imply DESCRIBE, so acl-t is left out of all topics and refused by name.
    expect(await both(async (b) => (await metadata(b, null)).map((t) => t.name).filter((n) => n === 'acl-t' || n === 'open-t'))).toEqual(['open-t'])
    expect(await both((b) => metadata(b, ['acl-t']))).toEqual([{ name: 'acl-t', errorCode: 29, ops: -2147483648 }])

    // Produce needs WRITE; WRITE implies DESCRIBE (Metadata answers, with KIP-430 operations).
    expect(await both((b) => produce(b, 'acl-t'))).toBe(29)
    await kafkaAcls(anonymous('Write', ['--topic', 'acl-t']), 1)
    expect(await both((b) => produce(b, 'acl-t'))).toBe(0)
    expect(await both((b) => metadata(b, ['acl-t']))).toEqual([{ name: 'acl-t', errorCode: 0, ops: (1 << 4) | (1 << 5) | (1 << 8) }])

    // Fetch needs READ; a PREFIXED DENY beats the LITERAL ALLOW; removing it allows again.
    expect(await both((b) => fetch(b, 'acl-t'))).toBe(29)
    await kafkaAcls(anonymous('Read', ['--topic', 'acl-t']), 1)
    expect(await both((b) => fetch(b, 'acl-t'))).toBe(0)
    const deny = ['--deny-principal', 'User:ANONYMOUS', '--operation', 'Read', '--topic', 'acl-', '--resource-pattern-type', 'prefixed']
    await kafkaAcls(['--add', ...deny], 1)
    expect(await both((b) => fetch(b, 'acl-t'))).toBe(29)
    await kafkaAcls(['--remove', '--force', ...deny], -1)
    expect(await both((b) => fetch(b, 'acl-t'))).toBe(0)

    // Groups need READ (FindCoordinator DESCRIBE, which READ implies); offsets need READ on the topic too.
    expect(await both((b) => findGroupCoordinator(b, 'acl-g'))).toBe(30)
    expect(await both((b) => commitOffset(b, 'acl-g', 'acl-t'))).toBe(30)
    await kafkaAcls(anonymous('Read', ['--group', 'acl-g']), 1)
    expect(await both((b) => findGroupCoordinator(b, 'acl-g'))).toBe(0)
    expect(await both((b) => commitOffset(b, 'acl-g', 'acl-t'))).toBe(0)

    // A transactional producer needs WRITE on its transactional id (DESCRIBE, which WRITE implies, to find its coordinator).
    expect(await both((b) => findCoordinator(b, 'acl-tx', 1))).toBe(53)
    expect(await both((b) => initTransactional(b, 'acl-tx'))).toBe(53)
    await kafkaAcls(anonymous('Write', ['--transactional-id', 'acl-tx']), 1)
    expect(await both((b) => findCoordinator(b, 'acl-tx', 1))).toBe(0)
    expect(await both((b) => initTransactional(b, 'acl-tx'))).toBe(0)

    // Configs: DESCRIBE_CONFIGS and ALTER_CONFIGS (which implies DESCRIBE_CONFIGS).
    expect(await both((b) => describeTopicConfigs(b, 'acl-t'))).toBe(29)
    expect(await both((b) => alterTopicConfig(b, 'acl-t'))).toBe(29)
    await kafkaAcls(anonymous('AlterConfigs', ['--topic', 'acl-t']), 1)
    expect(await both((b) => describeTopicConfigs(b, 'acl-t'))).toBe(0)
    expect(await both((b) => alterTopicConfig(b, 'acl-t'))).toBe(0)

    // DeleteRecords and DeleteTopics need DELETE.
    expect(await both((b) => deleteRecords(b, 'acl-t'))).toBe(29)
    expect(await both((b) => deleteTopic(b, 'acl-t'))).toBe(29)
    await kafkaAcls(anonymous('Delete', ['--topic', 'acl-t']), 1)
    expect(await both((b) => deleteRecords(b, 'acl-t'))).toBe(0)

    // kafka-acls --list prints the same ACLs on both (order aside: Kafka's is a hash map's).
    const listed = { kafka: '', ferrolog: '' }
    for (const b of BROKERS) listed[b] = await kafkaToolOk(ports[b], ACL_COMMAND, ['--list', '--topic', 'acl-t'])
    expect(sortedLines(listed.ferrolog)).toEqual(sortedLines(listed.kafka))
    expect(listed.ferrolog).toContain('(principal=User:ANONYMOUS, host=*, operation=WRITE, permissionType=ALLOW)')
    expect(await both((b) => deleteTopic(b, 'acl-t'))).toBe(0)
  }, 300_000)

  it("answers CreateAcls, DescribeAcls and DeleteAcls in Kafka's shape, messages included", async () => {
    // ANONYMOUS may manage ACLs (the first case gave it ALTER and DESCRIBE on the cluster).
    // Bindings: topic 2, LITERAL 3, READ 3, ALLOW 3.
    const binding = { resourceType: 2, resourceName: 'shape-t', resourcePatternType: 3, principal: 'User:carol', host: '*', operation: 3, permissionType: 3 }
    const filter = { resourceTypeFilter: 2, resourceNameFilter: 'shape-t', patternTypeFilter: 3, principalFilter: 'User:carol', hostFilter: null, operation: 3, permissionType: 3 }
    const before = { kafka: await aclCount('kafka'), ferrolog: await aclCount('ferrolog') }
    // A good creation: NONE with an empty message (Kafka's generated default), as Kafka.
    expect(
      await both((b) =>
        wire(b)
          .send(createAclsCodec, 3, { creations: [binding] })
          .then((r) => r.results),
      ),
    ).toEqual([{ errorCode: 0, errorMessage: '' }])
    for (const b of BROKERS) {
      for (let i = 0; (await aclCount(b)) !== before[b] + 1; i++) {
        if (i === 100) throw new Error(`${b}: the created ACL is not enforced`)
        await sleep(100)
      }
    }
    const described = await both((b) => wire(b).send(describeAclsCodec, 3, filter))
    expect(described.errorMessage).toBe('')
    expect(described.resources).toEqual([{ resourceType: 2, resourceName: 'shape-t', patternType: 3, acls: [{ principal: 'User:carol', host: '*', operation: 3, permissionType: 3 }] }])
    expect(await both((b) => wire(b).send(describeAclsCodec, 3, { ...filter, resourceTypeFilter: 1, patternTypeFilter: 4, resourceNameFilter: 'none-such' }))).toEqual({
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: '',
      resources: [],
    })
    // DeleteAcls: results and matching ACLs with a null message, as Kafka.
    const deleted = await both((b) => wire(b).send(deleteAclsCodec, 3, { filters: [filter, { ...filter, resourceNameFilter: 'none-such' }] }))
    expect(deleted.filterResults.map((r) => [r.errorCode, r.errorMessage, r.matchingAcls.length])).toEqual([
      [0, null, 1],
      [0, null, 0],
    ])

    // Where ferrolog answers bad input more plainly than Kafka 4.4, on purpose: a creation for
    // resource type ANY gets INVALID_REQUEST with a reason (Kafka: UNKNOWN_SERVER_ERROR, no message);
    // a filter naming resource type UNKNOWN gets INVALID_REQUEST (Kafka closes the connection).
    const anyType = { creations: [{ ...binding, resourceType: 1 }] }
    expect(await probe('kafka', (w) => w.send(createAclsCodec, 3, anyType).then((r) => r.results))).toEqual([{ errorCode: -1, errorMessage: null }])
    expect(await probe('ferrolog', (w) => w.send(createAclsCodec, 3, anyType).then((r) => r.results))).toEqual([{ errorCode: 42, errorMessage: 'Invalid resourceType ANY' }])
    const unknownType = { ...filter, resourceTypeFilter: 0 }
    expect(await probe('kafka', (w) => w.send(describeAclsCodec, 3, unknownType))).toBe('closed')
    expect(await probe('ferrolog', (w) => w.send(describeAclsCodec, 3, unknownType).then((r) => r.errorCode))).toBe(42)
    expect(await probe('kafka', (w) => w.send(deleteAclsCodec, 3, { filters: [unknownType] }))).toBe('closed')
    expect(await probe('ferrolog', (w) => w.send(deleteAclsCodec, 3, { filters: [unknownType] }).then((r) => r.filterResults[0].errorCode))).toBe(42)
  }, 120_000)
})
