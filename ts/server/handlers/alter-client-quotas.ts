/**
 * AlterClientQuotas: validated as Kafka's controller validates it
 * (ts/quota/client-quota-control-manager.ts), then stored all together (the data dir's file, or
 * etcd in a cluster) before the answer; enforcement follows at once, on every broker of a
 * cluster. validateOnly answers the same and stores nothing.
 *
 * An ip entity's name must be an IP address or a host that resolves (Kafka's
 * InetAddress.getByName): names that are not addresses are looked up first.
 *
 * Authorization (Kafka's ControllerApis): ALTER_CONFIGS on the CLUSTER resource, else every
 * entity is answered CLUSTER_AUTHORIZATION_FAILED.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { AlterClientQuotasRequest, AlterClientQuotasResponse } from '../../protocol/apis/alter-client-quotas.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { IP } from '../../quota/client-quota-entity.js'
import { alterClientQuotas } from '../../quota/client-quota-control-manager.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'

/** The ip names of the request that are neither addresses nor resolvable hosts. */
async function unresolvable(request: AlterClientQuotasRequest): Promise<Set<string>> {
  const hosts = new Set<string>()
  for (const entry of request.entries) for (const e of entry.entity) if (e.entityType === IP && e.entityName && isIP(e.entityName) === 0) hosts.add(e.entityName)
  const bad = new Set<string>()
  await Promise.all(
    [...hosts].map((host) =>
      lookup(host).catch(() => {
        bad.add(host)
      }),
    ),
  )
  return bad
}

export function alterClientQuotasHandler(broker: BrokerContext): ApiHandler<AlterClientQuotasRequest, AlterClientQuotasResponse> {
  return async (request, context) => {
    if (!broker.auth.authorizeCluster(context, AclOperation.ALTER_CONFIGS)) {
      return {
        throttleTimeMs: 0,
        entries: request.entries.map((e) => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', entity: e.entity })),
      }
    }
    const bad = await unresolvable(request)
    return broker.clientQuotas.update((current) => {
      const { response, changes } = alterClientQuotas(request, current, (name) => !bad.has(name))
      return { changes, result: response }
    })
  }
}
