/**
 * IncrementalAlterConfigs: each config of a TOPIC resource changed by its own operation, the
 * others kept, then the new set applied as AlterConfigs does (alter-configs.ts):
 *
 *   SET       the value (null refused: INVALID_REQUEST)
 *   DELETE    the override goes; the broker's value or Kafka's default applies again
 *   APPEND    list-typed configs only (cleanup.policy): the items added to the current value
 *   SUBTRACT  list-typed configs only: the items removed from the current value
 *
 * APPEND or SUBTRACT of any other config is INVALID_CONFIG, as in Kafka; so is an unknown name.
 * A BROKER resource's operations change that dynamic layer's values (alter-configs.ts).
 * A GROUP resource's overrides change the same way, then are validated as a whole and kept
 * (./group-configs.ts); APPEND and SUBTRACT are refused on every group config, even the LIST
 * streams.rack.aware.assignment.tags, as Kafka 4.4's controller does (INVALID_CONFIG).
 */
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../protocol/apis/incremental-alter-configs.js'
import { ConfigOperation } from '../../protocol/apis/incremental-alter-configs.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { alterResources, dynamicLayer } from './alter-configs.js'
import { ConfigResourceType } from '../../protocol/apis/describe-configs.js'
import { BROKER_CONFIG_KEY } from '../../config/broker-configs.js'
import { ConfigType, topicConfigEntries } from './describe-configs.js'
import { alterGroupConfigs, describeGroupConfigs } from './group-configs.js'

const OPERATION_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT']

function listOf(value: string | null): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

export function incrementalAlterConfigsHandler(broker: BrokerContext): ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse> {
  return async (request, context) => ({
    throttleTimeMs: 0,
    responses: await alterResources(broker, context, request.resources, async (r) => {
      if (r.resourceType === ConfigResourceType.BROKER) {
        const layer = dynamicLayer(r.resourceName)
        const dynamic = broker.dynamicConfig!
        const configs = applyOperations(r.configs, { ...dynamic.layer(layer) }, (name) => {
          const key = BROKER_CONFIG_KEY.get(name)
          return key ? { configType: ConfigType[key.value.type], value: dynamic.synonyms(name)[0]?.value ?? null } : undefined
        })
        await dynamic.alter(layer, configs, request.validateOnly)
        return
      }
      if (r.resourceType === ConfigResourceType.GROUP) {
        // Kafka's controller knows no group config as a LIST: it refuses APPEND and SUBTRACT on every one.
        const listOp = r.configs.find((c) => c.configOperation === ConfigOperation.APPEND || c.configOperation === ConfigOperation.SUBTRACT)
        if (listOp) throw new TopicError(ErrorCode.INVALID_CONFIG, `Can't ${OPERATION_NAMES[listOp.configOperation]} to key ${listOp.name} because its type is not LIST.`)
        const current = await describeGroupConfigs(broker, r.resourceName, null, false)
        const configs = applyOperations(r.configs, await broker.groupConfigs.overrides(r.resourceName), (name) => current.find((e) => e.name === name))
        await alterGroupConfigs(broker, r.resourceName, configs, request.validateOnly)
        return
      }
      const topic = broker.topics.get(r.resourceName)
      if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${r.resourceName}`)
      const current = topicConfigEntries(broker, topic.configs, false)
      const configs = applyOperations(r.configs, { ...topic.configs }, (name) => current.find((e) => e.name === name))
      await broker.alterTopicConfigs(r.resourceName, configs, request.validateOnly)
    }),
  })
}

/**
 * Each config's operation applied to `configs` (the resource's own values); `known` gives a
 * config's type and current value (APPEND and SUBTRACT need a list).
 */
function applyOperations(
  operations: ReadonlyArray<{ name: string; configOperation: number; value: string | null }>,
  configs: Record<string, string>,
  known: (name: string) => { configType: number; value: string | null } | undefined,
): Record<string, string> {
  for (const c of operations) {
    const current = known(c.name)
    switch (c.configOperation) {
      case ConfigOperation.SET:
        if (c.value === null) throw new TopicError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${c.name}`)
        configs[c.name] = c.value
        break
      case ConfigOperation.DELETE:
        delete configs[c.name]
        break
      case ConfigOperation.APPEND:
      case ConfigOperation.SUBTRACT: {
        if (!current || current.configType !== ConfigType.LIST) {
          throw new TopicError(ErrorCode.INVALID_CONFIG, `Config value ${OPERATION_NAMES[c.configOperation]!.toLowerCase()} is not allowed for config key: ${c.name}`)
        }
        const items = listOf(configs[c.name] ?? current.value)
        const given = listOf(c.value)
        const next = c.configOperation === ConfigOperation.APPEND ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i))
        configs[c.name] = next.join(',')
        break
      }
      default:
        throw new TopicError(ErrorCode.INVALID_REQUEST, `unknown config operation ${c.configOperation} for ${c.name}`)
    }
  }
  return configs
}
