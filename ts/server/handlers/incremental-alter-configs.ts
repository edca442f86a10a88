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
import { alterResources } from './alter-configs.js'
import { ConfigType, topicConfigEntries } from './describe-configs.js'
import { ConfigResourceType } from '../../protocol/apis/describe-configs.js'
import { alterGroupConfigs, describeGroupConfigs } from './group-configs.js'

const OPERATION_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT']

function listOf(value: string | null): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
}

export function incrementalAlterConfigsHandler(broker: BrokerContext): ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse> {
  return async (request) => ({
    throttleTimeMs: 0,
    responses: await alterResources(broker, request.resources, async (r) => {
      const isGroup = r.resourceType === ConfigResourceType.GROUP
      const topic = isGroup ? undefined : broker.topics.get(r.resourceName)
      if (!isGroup && !topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${r.resourceName}`)
      const configs = isGroup ? await broker.groupConfigs.overrides(r.resourceName) : { ...topic!.configs }
      const current = isGroup ? await describeGroupConfigs(broker, r.resourceName, null, false) : topicConfigEntries(broker, topic!.configs, false)
      for (const c of r.configs) {
        const known = current.find((e) => e.name === c.name)
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
            // Kafka's controller knows no group config as a LIST: it refuses both on every one.
            if (isGroup) throw new TopicError(ErrorCode.INVALID_CONFIG, `Can't ${OPERATION_NAMES[c.configOperation]} to key ${c.name} because its type is not LIST.`)
            if (!known || known.configType !== ConfigType.LIST) {
              throw new TopicError(ErrorCode.INVALID_CONFIG, `Config value ${OPERATION_NAMES[c.configOperation].toLowerCase()} is not allowed for config key: ${c.name}`)
            }
            const items = listOf(configs[c.name] ?? known.value)
            const given = listOf(c.value)
            const next = c.configOperation === ConfigOperation.APPEND ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i))
            configs[c.name] = next.join(',')
            break
          }
          default:
            throw new TopicError(ErrorCode.INVALID_REQUEST, `unknown config operation ${c.configOperation} for ${c.name}`)
        }
      }
      if (isGroup) return alterGroupConfigs(broker, r.resourceName, configs, request.validateOnly)
      await broker.alterTopicConfigs(r.resourceName, configs, request.validateOnly)
    }),
  })
}
