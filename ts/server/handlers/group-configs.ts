/**
 * The GROUP resources (type 32) of DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, as
 * Kafka 4.4 answers them: every group config (ts/group/group-config.ts) with its value, source
 * (DYNAMIC_GROUP_CONFIG for the group's override, STATIC_BROKER_CONFIG for the broker's setting
 * where it is not Kafka's default, DEFAULT_CONFIG for Kafka's default) and synonyms; a change validated as a whole and kept (ts/group/group-config-manager.ts). The group
 * need not exist. A refused config is INVALID_CONFIG with Kafka's message.
 */
import type { DescribeConfigsResourceResult } from '../../protocol/apis/describe-configs.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { GroupConfigError, type GroupConfigType } from '../../group/group-config.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'

/** DescribeConfigsResponse ConfigSource codes of the group's values. */
const SOURCE = { DYNAMIC_GROUP_CONFIG: 8, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const
/** DescribeConfigsResponse ConfigType codes. */
const TYPE: Record<GroupConfigType, number> = { BOOLEAN: 1, STRING: 2, INT: 3, LONG: 5, LIST: 7 }

export async function describeGroupConfigs(broker: BrokerContext, groupId: string, keys: string[] | null, synonymsToo: boolean): Promise<DescribeConfigsResourceResult[]> {
  const described = await broker.groupConfigs.describe(groupId)
  return described
    .filter((c) => keys === null || keys.length === 0 || keys.includes(c.def.name))
    .map((c) => ({
      name: c.def.name,
      value: c.value,
      readOnly: false,
      configSource: SOURCE[c.source],
      isSensitive: false,
      synonyms: synonymsToo ? c.synonyms.map((s) => ({ name: s.name, value: s.value, source: SOURCE[s.source] })) : [],
      configType: TYPE[c.def.type],
      documentation: null,
    }))
}

/** The group's configs become `next` (validated; stored unless validateOnly). Throws TopicError with Kafka's code. */
export async function alterGroupConfigs(broker: BrokerContext, groupId: string, next: Record<string, string>, validateOnly: boolean): Promise<void> {
  try {
    await broker.groupConfigs.alter(groupId, next, validateOnly)
  } catch (err) {
    if (err instanceof GroupConfigError) throw new TopicError(ErrorCode.INVALID_CONFIG, err.message)
    throw err
  }
  if (!validateOnly) broker.logger.info('altered group configs', { group: groupId, configs: next })
}
