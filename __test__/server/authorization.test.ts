/**
 * The broker's authorization from a client's side (PLAINTEXT: User:ANONYMOUS): a super user is
 * allowed past a DENY; allow.everyone.if.no.acl.found=false refuses what no ACL allows; the ACL
 * APIs need the cluster's ALTER/DESCRIBE and answer SECURITY_DISABLED without an authorizer; and
 * the ACLs are enforced again after a restart (kept in the data dir).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAclsCodec } from '../../ts/protocol/apis/create-acls.js'
import { alterShareGroupOffsetsCodec } from '../../ts/protocol/apis/alter-share-group-offsets.js'
import { deleteShareGroupOffsetsCodec } from '../../ts/protocol/apis/delete-share-group-offsets.js'
import { describeAclsCodec } from '../../ts/protocol/apis/describe-acls.js'
import { describeShareGroupOffsetsCodec } from '../../ts/protocol/apis/describe-share-group-offsets.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { defaultMetadataRequest } from '../../ts/protocol/messages/metadata-request.js'
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../ts/security/authorizer/acl.js'
import { STANDARD_AUTHORIZER_CLASS } from '../../ts/security/authorizer/standard-authorizer.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

let broker: Broker | undefined
let dir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

async function ask<T>(port: number, f: (w: KafkaWire) => Promise<T>): Promise<T> {
  const wire = new KafkaWire(await connectTo(port), 'authorization-test')
  try {
    return await f(wire)
  } finally {
    wire.close()
  }
}

const produce = (port: number, topic: string) =>
  ask(port, (w) =>
    w.send(produceCodec, 9, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records: buildBatch([{ key: null, value: Buffer.from('x'), headers: [] }]) }] }],
    }),
  ).then((r) => r.responses[0].partitionResponses[0].errorCode)

const createAcl = (port: number, creation: { resourceType: number; resourceName: string; operation: number; permissionType: number }) =>
  ask(port, (w) => w.send(createAclsCodec, 3, { creations: [{ resourcePatternType: PatternType.LITERAL, principal: 'User:ANONYMOUS', host: '*', ...creation }] })).then((r) => r.results[0])

const describeAll = (port: number) =>
  ask(port, (w) => w.send(describeAclsCodec, 3, { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 }))

const authorizer = (more: Record<string, string> = {}) => ({ 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, ...more })

describe('authorization', () => {
  it('without an authorizer everything is allowed and the ACL APIs answer SECURITY_DISABLED', async () => {
    broker = await startBroker()
    await broker.createTopic('t', 1, {})
    expect(await produce(broker.port, 't')).toBe(ErrorCode.NONE)
    expect(await createAcl(broker.port, { resourceType: ResourceType.TOPIC, resourceName: 't', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW })).toEqual({
      errorCode: ErrorCode.SECURITY_DISABLED,
      errorMessage: 'No Authorizer is configured.',
    })
    expect(await describeAll(broker.port)).toMatchObject({ errorCode: ErrorCode.SECURITY_DISABLED, resources: [] })
  })

  it('a super user is allowed past a DENY of everything', async () => {
    broker = await startBroker({ props: authorizer({ 'super.users': 'User:admin;User:ANONYMOUS' }) })
    await broker.createTopic('t', 1, {})
    const all = { resourceType: ResourceType.TOPIC, resourceName: 't', operation: AclOperation.ALL, permissionType: AclPermissionType.DENY }
    expect(await createAcl(broker.port, all)).toEqual({ errorCode: ErrorCode.NONE, errorMessage: '' })
    expect(await produce(broker.port, 't')).toBe(ErrorCode.NONE)
  })

  it('allow.everyone.if.no.acl.found=false: refused until an ACL allows; the ACL APIs need the cluster; ACLs survive a restart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ferrolog-authorization-'))
    broker = await startBroker({ dataDir: dir, props: authorizer() })
    await broker.createTopic('t', 1, {})
    expect(await produce(broker.port, 't')).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    // Metadata of all topics leaves t out; by name: TOPIC_AUTHORIZATION_FAILED.
    const all = await ask(broker.port, (w) => w.send(metadataCodec, 12, { ...defaultMetadataRequest(), topics: null }))
    expect(all.topics).toEqual([])
    // No ALTER on the cluster: CreateAcls refused; DescribeAcls needs DESCRIBE.
    const write = { resourceType: ResourceType.TOPIC, resourceName: 't', operation: AclOperation.WRITE, permissionType: AclPermissionType.ALLOW }
    expect(await createAcl(broker.port, write)).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })
    expect(await describeAll(broker.port)).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })
    await broker.stop()

    // An operator's super user grants what ANONYMOUS needs (here: the same broker restarted with it).
    broker = await startBroker({ dataDir: dir, props: authorizer({ 'super.users': 'User:ANONYMOUS' }) })
    expect(await createAcl(broker.port, write)).toEqual({ errorCode: ErrorCode.NONE, errorMessage: '' })
    await broker.stop()

    broker = await startBroker({ dataDir: dir, props: authorizer() })
    expect(await produce(broker.port, 't')).toBe(ErrorCode.NONE)
    const byName = await ask(broker.port, (w) => w.send(metadataCodec, 12, { ...defaultMetadataRequest(), topics: [{ name: 't', topicId: Buffer.alloc(16) }], includeTopicAuthorizedOperations: true }))
    expect(byName.topics[0]).toMatchObject({ name: 't', errorCode: ErrorCode.NONE, topicAuthorizedOperations: (1 << AclOperation.WRITE) | (1 << AclOperation.DESCRIBE) })
  })

  it("share group offsets: Kafka's operations on the group and the topics", async () => {
    broker = await startBroker({ props: authorizer({ 'allow.everyone.if.no.acl.found': 'true' }) })
    await broker.createTopic('open', 1, {})
    await broker.createTopic('secret', 1, {})
    const deny = (resourceType: number, resourceName: string, operation: number) => createAcl(broker!.port, { resourceType, resourceName, operation, permissionType: AclPermissionType.DENY })
    await deny(ResourceType.GROUP, 'no-describe', AclOperation.DESCRIBE)
    await deny(ResourceType.GROUP, 'no-read', AclOperation.READ)
    await deny(ResourceType.GROUP, 'no-delete', AclOperation.DELETE)
    await deny(ResourceType.TOPIC, 'secret', AclOperation.DESCRIBE)
    await deny(ResourceType.TOPIC, 'secret', AclOperation.READ)
    const topics = [
      { topicName: 'open', partitions: [0] },
      { topicName: 'secret', partitions: [0] },
    ]
    const described = await ask(broker.port, (w) =>
      w.send(describeShareGroupOffsetsCodec, 1, {
        groups: [
          { groupId: 'no-describe', topics },
          { groupId: 'g', topics },
        ],
      }),
    )
    expect(described.groups.map((g) => [g.groupId, g.errorCode, g.topics.map((t) => [t.topicName, t.partitions[0]!.errorCode, t.partitions[0]!.startOffset])])).toEqual([
      ['no-describe', ErrorCode.GROUP_AUTHORIZATION_FAILED, []],
      [
        'g',
        ErrorCode.NONE,
        [
          ['open', ErrorCode.NONE, -1n],
          ['secret', ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1n],
        ],
      ],
    ])
    const alter = (groupId: string) =>
      ask(broker!.port, (w) => w.send(alterShareGroupOffsetsCodec, 0, { groupId, topics: topics.map((t) => ({ topicName: t.topicName, partitions: [{ partitionIndex: 0, startOffset: 0n }] })) }))
    expect(await alter('no-read')).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, errorMessage: 'Group authorization failed.', responses: [] })
    expect((await alter('g')).responses.map((t) => [t.topicName, t.partitions[0]!.errorCode])).toEqual([
      ['secret', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ['open', ErrorCode.NONE],
    ])
    const deleteOffsets = (groupId: string) => ask(broker!.port, (w) => w.send(deleteShareGroupOffsetsCodec, 0, { groupId, topics: topics.map((t) => ({ topicName: t.topicName })) }))
    expect(await deleteOffsets('no-delete')).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, responses: [] })
    expect((await deleteOffsets('g')).responses.map((t) => [t.topicName, t.errorCode])).toEqual([
      ['secret', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ['open', ErrorCode.NONE],
    ])
  })
})
