/**
 * AlterConfigs: each TOPIC resource's config overrides become exactly the ones given (a null
 * value is refused), validated, persisted and applied to the topic's logs at once
 * (`Broker.alterTopicConfigs`). IncrementalAlterConfigs (incremental-alter-configs.ts) shares
 * the resource handling here.
 *
 * Errors per resource, as Kafka's: UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG (unknown name,
 * bad value), INVALID_REQUEST (a name given twice, a null value).
 *
 * A BROKER resource (this broker's id, or '' for the cluster-wide defaults) sets the dynamic
 * broker configs of that layer (KIP-226, ts/server/dynamic-broker-config.ts): AlterConfigs
 * replaces the layer with the configs given. A read-only key or a bad value: INVALID_REQUEST,
 * as Kafka answers; a broker of a cluster keeps them in etcd, where every broker sees them.
 * A GROUP resource's configs become the ones given (./group-configs.ts). Other resource types:
 * INVALID_REQUEST.
 */
import type { AlterConfigsRequest, AlterConfigsResourceResponse, AlterConfigsResponse } from '../../protocol/apis/alter-configs.js'
import { ConfigResourceType } from '../../protocol/apis/describe-configs.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler, RequestContext } from '../kafka-apis.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import type { DynamicLayer } from '../dynamic-broker-config.js'
import { alterGroupConfigs } from './group-configs.js'

interface Resource {
  resourceType: number
  resourceName: string
  configs: ReadonlyArray<{ name: string }>
}

/** Each resource's answer, in order: its changes applied (`alter`), or the error that stopped them. */
export async function alterResources<R extends Resource>(
  broker: BrokerContext,
  context: RequestContext,
  resources: readonly R[],
  alter: (resource: R) => Promise<void>,
): Promise<AlterConfigsResourceResponse[]> {
  const responses: AlterConfigsResourceResponse[] = []
  for (const r of resources) responses.push(await alterResource(broker, context, r, () => alter(r)))
  return responses
}

async function alterResource(broker: BrokerContext, context: RequestContext, { resourceType, resourceName, configs }: Resource, alter: () => Promise<void>): Promise<AlterConfigsResourceResponse> {
  const names = configs.map((c) => c.name)
  const answer = (errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, resourceType, resourceName })
  const duplicate = names.find((n, i) => names.indexOf(n) !== i)
  // Kafka's ConfigAdminManager names no key.
  if (duplicate !== undefined) return answer(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys')
  // Kafka's: ALTER_CONFIGS on the topic, the group, or the cluster for a broker.
  const denied = broker.auth.configResourceError(context, AclOperation.ALTER_CONFIGS, resourceType, resourceName)
  if (denied !== ErrorCode.NONE) return answer(denied, null)
  if (resourceType === ConfigResourceType.BROKER) {
    if (resourceName !== '' && resourceName !== String(broker.config.nodeId)) {
      return answer(ErrorCode.INVALID_REQUEST, `unexpected broker id, expected ${broker.config.nodeId} or the empty string, but received ${resourceName}`)
    }
    if (!broker.dynamicConfig) {
      return answer(ErrorCode.INVALID_CONFIG, `broker configs cannot be changed while this broker runs: set ${names.join(', ') || 'them'} in the broker's --config file and restart it`)
    }
  } else if (resourceType !== ConfigResourceType.TOPIC && resourceType !== ConfigResourceType.GROUP) {
    return answer(ErrorCode.INVALID_REQUEST, `resource type ${resourceType} is not supported`)
  }
  try {
    await alter()
    return answer(ErrorCode.NONE, null)
  } catch (err) {
    if (err instanceof TopicError) return answer(err.errorCode, err.message)
    throw err
  }
}

/** The dynamic layer a BROKER resource names: '' the cluster-wide defaults, an id this broker's own. */
export function dynamicLayer(resourceName: string): DynamicLayer {
  return resourceName === '' ? 'default' : 'broker'
}

export function alterConfigsHandler(broker: BrokerContext): ApiHandler<AlterConfigsRequest, AlterConfigsResponse> {
  return async (request, context) => ({
    throttleTimeMs: 0,
    responses: await alterResources(broker, context, request.resources, async (r) => {
      const configs: Record<string, string> = {}
      for (const c of r.configs) {
        if (c.value === null) throw new TopicError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${c.name}`)
        configs[c.name] = c.value
      }
      if (r.resourceType === ConfigResourceType.BROKER) await broker.dynamicConfig!.alter(dynamicLayer(r.resourceName), configs, request.validateOnly)
      else if (r.resourceType === ConfigResourceType.GROUP) await alterGroupConfigs(broker, r.resourceName, configs, request.validateOnly)
      else await broker.alterTopicConfigs(r.resourceName, configs, request.validateOnly)
    }),
  })
}
