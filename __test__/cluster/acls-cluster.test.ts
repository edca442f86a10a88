/**
 * ACLs in a cluster: kept in etcd (ts/cluster/acl-store.ts) and watched, so an ACL created
 * through one broker is enforced by the other without a restart, a deletion through the other
 * lifts it everywhere, and a restarted broker enforces what etcd holds (none are in its data dir).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { createAclsCodec } from '../../ts/protocol/apis/create-acls.js'
import { deleteAclsCodec } from '../../ts/protocol/apis/delete-acls.js'
import { describeConfigsCodec } from '../../ts/protocol/apis/describe-configs.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../ts/security/authorizer/acl.js'
import { STANDARD_AUTHORIZER_CLASS } from '../../ts/security/authorizer/standard-authorizer.js'
import { EtcdBrokerCluster } from '../helpers/etcd-cluster.js'

let cluster: EtcdBrokerCluster | undefined
afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

async function withClient<T>(port: number, f: (c: NetworkClient) => Promise<T>): Promise<T> {
  const client = await NetworkClient.connect(`127.0.0.1:${port}`)
  try {
    return await f(client)
  } finally {
    await client.close()
  }
}

const aliceReads = { resourceType: ResourceType.TOPIC, resourceName: 'guarded', principal: 'User:alice', host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW }

/** DescribeConfigs of the topic `guarded` as User:ANONYMOUS (allowed while no ACL names it). */
const describeGuarded = (port: number) =>
  withClient(port, async (c) => {
    const r = await c.send(describeConfigsCodec, 4, {
      resources: [{ resourceType: 2, resourceName: 'guarded', configurationKeys: ['retention.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    })
    return r.results[0].errorCode
  })

async function eventually(port: number, errorCode: number): Promise<void> {
  for (let i = 0; (await describeGuarded(port)) !== errorCode; i++) {
    if (i === 50) throw new Error(`broker on ${port} never answered ${errorCode}`)
    await sleep(100)
  }
}

describe('ACLs in a cluster (etcd)', () => {
  it('created through one broker, enforced by the other; deleted through the other, lifted everywhere; kept over a restart', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2], { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, 'allow.everyone.if.no.acl.found': 'true' })
    const [b1, b2] = [cluster.broker(1), cluster.broker(2)]
    await b1.createTopic('guarded', 1, {})
    expect(await describeGuarded(b2.port)).toBe(ErrorCode.NONE)

    const created = await withClient(b1.port, (c) => c.send(createAclsCodec, 3, { creations: [{ ...aliceReads, resourcePatternType: PatternType.LITERAL }] }))
    expect(created.results).toEqual([{ errorCode: ErrorCode.NONE, errorMessage: '' }])
    // b2 learns of it from its watch: the topic now has ACLs, none for ANONYMOUS.
    await eventually(b2.port, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    expect(await describeGuarded(b1.port)).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED)

    await cluster.stop(2)
    const again = await cluster.start(2)
    expect(await describeGuarded(again.port)).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED)

    const deleted = await withClient(again.port, (c) =>
      c.send(deleteAclsCodec, 3, {
        filters: [
          {
            resourceTypeFilter: ResourceType.ANY,
            resourceNameFilter: null,
            patternTypeFilter: PatternType.ANY,
            principalFilter: 'User:alice',
            hostFilter: null,
            operation: AclOperation.ANY,
            permissionType: AclPermissionType.ANY,
          },
        ],
      }),
    )
    expect(deleted.filterResults[0].matchingAcls).toMatchObject([{ ...aliceReads, patternType: PatternType.LITERAL }])
    await eventually(b1.port, ErrorCode.NONE)
  }, 120_000)
})
