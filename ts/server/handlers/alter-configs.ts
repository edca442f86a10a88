/**
 * AlterConfigs: each TOPIC resource's config overrides become exactly the ones given (a null
 * value is refused), validated, persisted and applied to the topic's logs at once
 * (`Broker.alterTopicConfigs`). IncrementalAlterConfigs (incremental-alter-configs.ts) shares
 * the resource handling here.
 *
 * Errors per resource, as Kafka's: UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG (unknown name,
 * bad value), INVALID_REQUEST (a name given twice, a null value). Broker configs cannot change
 * while the broker runs (they are read from server.properties at start): INVALID_CONFIG saying
 * so. A GROUP resource's configs become the ones given (./group-configs.ts); other resource
 * types: INVALID_REQUEST.
 */
import type { AlterConfigsRequest, AlterConfigsResourceResponse, AlterConfigsResponse } from '../../protocol/apis/alter-configs.js'
import { ConfigResourceType } from '../../protocol/apis/describe-configs.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { alterGroupConfigs } from './group-configs.js'

interface Resource {
  resourceType: number
  resourceName: string
  configs: ReadonlyArray<{ name: string }>
}

/** Each resource's answer, in order: its changes applied (`alter`), or the error that stopped them. */
export async function alterResources<R extends Resource>(broker: BrokerContext, resources: readonly R[], alter: (resource: R) => Promise<void>): Promise<AlterConfigsResourceResponse[]> {
  const responses: AlterConfigsResourceResponse[] = []
  for (const r of resources) responses.push(await alterResource(broker, r, () => alter(r)))
  return responses
}

async function alterResource(broker: BrokerContext, { resourceType, resourceName, configs }: Resource, alter: () => Promise<void>): Promise<AlterConfigsResourceResponse> {
  const names = configs.map((c) => c.name)
  const answer = (errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, resourceType, resourceName })
  const duplicate = names.find((n, i) => names.indexOf(n) !== i)
  // Kafka's ConfigAdminManager names no key.
  if (duplicate !== undefined) return answer(ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys')
  if (resourceType === ConfigResourceType.BROKER) {
    if (resourceName !== '' && resourceName !== String(broker.config.nodeId)) {
      return answer(ErrorCode.INVALID_REQUEST, `unexpected broker id, expected ${broker.config.nodeId} or the empty string, but received ${resourceName}`)
    }
    return answer(ErrorCode.INVALID_CONFIG, `broker configs cannot be changed while the broker runs: set ${names.join(', ') || 'them'} in the broker's --config file and restart it`)
  }
  if (resourceType !== ConfigResourceType.TOPIC && resourceType !== ConfigResourceType.GROUP) return answer(ErrorCode.INVALID_REQUEST, `resource type ${resourceType} is not supported`)
  try {
    await alter()
    return answer(ErrorCode.NONE, null)
  } catch (err) {
    if (err instanceof TopicError) return answer(err.errorCode, err.message)
    throw err
  }
}

export function alterConfigsHandler(broker: BrokerContext): ApiHandler<AlterConfigsRequest, AlterConfigsResponse> {
  return async (request) => ({
    throttleTimeMs: 0,
    responses: await alterResources(broker, request.resources, async (r) => {
      const configs: Record<string, string> = {}
      for (const c of r.configs) {
        if (c.value === null) throw new TopicError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${c.name}`)
        configs[c.name] = c.value
      }
      if (r.resourceType === ConfigResourceType.GROUP) return alterGroupConfigs(broker, r.resourceName, configs, request.validateOnly)
      await broker.alterTopicConfigs(r.resourceName, configs, request.validateOnly)
    }),
  })
}
