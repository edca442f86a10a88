/**
 * UpdateFeatures on a standalone broker, at each version: v0's allowDowngrade, v1's upgrade
 * types and validateOnly, v0-v1's result per feature (none when refused), v2's top-level error
 * only; each change stored (ferrolog-features.json) and seen in ApiVersions with a new epoch;
 * ALTER on the cluster required, as Kafka's controller requires it.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { createAclsCodec } from '../../ts/protocol/apis/create-acls.js'
import { updateFeaturesCodec } from '../../ts/protocol/apis/update-features.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { AclOperation, AclPermissionType, CLUSTER_NAME, PatternType, ResourceType } from '../../ts/security/authorizer/acl.js'
import { STANDARD_AUTHORIZER_CLASS } from '../../ts/security/authorizer/standard-authorizer.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
let client: NetworkClient | undefined
afterEach(async () => {
  await client?.close()
  await broker?.stop()
  client = broker = undefined
})

const update = (c: NetworkClient, version: number, updates: Array<{ feature: string; maxVersionLevel: number; upgradeType?: number; allowDowngrade?: boolean }>, validateOnly = false) =>
  c.send(updateFeaturesCodec, version, {
    timeoutMs: 60_000,
    featureUpdates: updates.map((u) => ({ allowDowngrade: false, upgradeType: 1, ...u })),
    validateOnly,
  })

/** The other features a new data dir finalizes (group.version and share.version, ts/server/broker-features.ts). */
const OTHERS = [
  { name: 'group.version', maxVersionLevel: 1 },
  { name: 'share.version', maxVersionLevel: 1 },
]

async function finalized(c: NetworkClient): Promise<{ epoch: bigint; features: Array<{ name: string; maxVersionLevel: number }> }> {
  const r = await c.send(apiVersionsCodec, 4, { clientSoftwareName: 't', clientSoftwareVersion: '1' })
  return { epoch: r.finalizedFeaturesEpoch, features: r.finalizedFeatures.map((f) => ({ name: f.name, maxVersionLevel: f.maxVersionLevel })) }
}

describe('UpdateFeatures', () => {
  it('v0-v2: changes transaction.version, stores it and moves the epoch; refused updates change nothing', async () => {
    const dataDir = tempDir('ferrolog-update-features-')
    broker = await startBroker({ dataDir })
    client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    const start = await finalized(client)
    expect(start).toEqual({ epoch: 0n, features: [...OTHERS, { name: 'transaction.version', maxVersionLevel: 2 }] })

    // v1 validateOnly: answered as the change would be, nothing changes.
    expect(await update(client, 1, [{ feature: 'transaction.version', maxVersionLevel: 1, upgradeType: 2 }], true)).toEqual({
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      results: [{ feature: 'transaction.version', errorCode: ErrorCode.NONE, errorMessage: null }],
    })
    expect(await finalized(client)).toEqual(start)

    // v0: allowDowngrade is a safe downgrade.
    expect(await update(client, 0, [{ feature: 'transaction.version', maxVersionLevel: 1, allowDowngrade: true }])).toMatchObject({
      errorCode: ErrorCode.NONE,
      results: [{ feature: 'transaction.version', errorCode: 0 }],
    })
    expect(await finalized(client)).toEqual({ epoch: 1n, features: [...OTHERS, { name: 'transaction.version', maxVersionLevel: 1 }] })
    expect(JSON.parse(readFileSync(join(dataDir, 'ferrolog-features.json'), 'utf8'))).toEqual({ version: 1, epoch: 1, features: { 'group.version': 1, 'share.version': 1, 'transaction.version': 1 } })

    // Refused: the whole request, no result per feature, with Kafka's message.
    const refused = await update(client, 1, [
      { feature: 'transaction.version', maxVersionLevel: 2 },
      { feature: 'transaction.version', maxVersionLevel: 0, upgradeType: 7 },
    ])
    expect(refused).toEqual({
      throttleTimeMs: 0,
      errorCode: ErrorCode.INVALID_UPDATE_VERSION,
      errorMessage:
        'The update failed for all features since the following feature had an error: Invalid update version 0 for feature transaction.version. The controller does not support the given upgrade type.',
      results: [],
    })
    expect(await update(client, 2, [{ feature: 'transaction.version', maxVersionLevel: -1, upgradeType: 3 }])).toMatchObject({
      errorCode: ErrorCode.INVALID_UPDATE_VERSION,
      errorMessage: expect.stringContaining('A feature version cannot be less than 0.'),
    })
    expect(await finalized(client)).toEqual({ epoch: 1n, features: [...OTHERS, { name: 'transaction.version', maxVersionLevel: 1 }] })

    // v2: the top-level error only; level 0 (an unsafe downgrade) leaves the feature out of ApiVersions.
    expect(await update(client, 2, [{ feature: 'transaction.version', maxVersionLevel: 0, upgradeType: 3 }])).toEqual({ throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results: [] })
    expect(await finalized(client)).toEqual({ epoch: 2n, features: OTHERS })
    expect(await update(client, 2, [{ feature: 'transaction.version', maxVersionLevel: 2 }])).toMatchObject({ errorCode: ErrorCode.NONE })
    expect(await finalized(client)).toEqual({ epoch: 3n, features: [...OTHERS, { name: 'transaction.version', maxVersionLevel: 2 }] })
  })

  it('a change the data dir cannot store is UNKNOWN_SERVER_ERROR and changes nothing', async () => {
    const dataDir = tempDir('ferrolog-update-features-')
    broker = await startBroker({ dataDir })
    client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    // The temporary file of the atomic rewrite cannot be made.
    mkdirSync(join(dataDir, 'ferrolog-features.json.tmp'))
    const r = await update(client, 1, [{ feature: 'transaction.version', maxVersionLevel: 1, upgradeType: 2 }])
    expect(r).toMatchObject({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, results: [] })
    expect(await finalized(client)).toEqual({ epoch: 0n, features: [...OTHERS, { name: 'transaction.version', maxVersionLevel: 2 }] })
  })

  it('needs ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED at the top level, nothing changed', async () => {
    broker = await startBroker({ props: { 'authorizer.class.name': STANDARD_AUTHORIZER_CLASS, 'allow.everyone.if.no.acl.found': 'true' } })
    client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    const deny = await client.send(createAclsCodec, 3, {
      creations: [
        {
          resourceType: ResourceType.CLUSTER,
          resourceName: CLUSTER_NAME,
          resourcePatternType: PatternType.LITERAL,
          principal: 'User:ANONYMOUS',
          host: '*',
          operation: AclOperation.ALTER,
          permissionType: AclPermissionType.DENY,
        },
      ],
    })
    expect(deny.results[0]!.errorCode).toBe(ErrorCode.NONE)
    expect(await update(client, 1, [{ feature: 'transaction.version', maxVersionLevel: 1, upgradeType: 2 }])).toEqual({
      throttleTimeMs: 0,
      errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
      errorMessage: 'Cluster authorization failed.',
      results: [],
    })
    expect((await finalized(client)).features).toEqual([...OTHERS, { name: 'transaction.version', maxVersionLevel: 2 }])
  })
})
