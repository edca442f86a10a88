/**
 * DescribeConfigs for TOPIC and BROKER resources, with Kafka's config names, sources and types.
 *
 * Every key comes from the config table (ts/config). A topic config is the topic's own value
 * (source DYNAMIC_TOPIC_CONFIG) when set, else the broker's (`log.*` settings): a dynamic
 * per-broker or cluster-wide value (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
 * KIP-226), STATIC_BROKER_CONFIG when server.properties sets it to other than Kafka's default,
 * DEFAULT_CONFIG otherwise. With includeSynonyms, each config lists where its value could come
 * from, most specific first, as Kafka does. A BROKER resource is this broker by its node id
 * (every key it reads, an internal one of Kafka's only when set; read-only unless dynamic); the
 * cluster-wide default resource ("") lists the dynamic defaults set. A GROUP resource: the group's configs (./group-configs.ts).
 * Other broker ids and other resource types -> INVALID_REQUEST.
 */
import {
  ConfigResourceType,
  type DescribeConfigsRequest,
  type DescribeConfigsResourceResult,
  type DescribeConfigsResponse,
  type DescribeConfigsResult,
  type DescribeConfigsSynonym,
} from '../../protocol/apis/describe-configs.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { ConfigType } from '../../config/config-def.js'
import { BROKER_CONFIG_KEY, BROKER_CONFIG_KEYS, type BrokerConfigKey } from '../../config/broker-configs.js'
import { TOPIC_CONFIG_KEYS } from '../../config/topic-configs.js'
import type { BrokerContext } from './broker-context.js'
import { brokerConfigFrom, type BrokerConfig } from '../config.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import { describeGroupConfigs } from './group-configs.js'

export { ConfigType } from '../../config/config-def.js'

/** Kafka's DescribeConfigsResponse ConfigSource codes. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  CLIENT_METRICS_CONFIG: 7,
  GROUP_CONFIG: 8,
} as const

/** The broker's settings when nothing is configured: what tells a static setting from a default. */
const DEFAULT_BROKER = brokerConfigFrom({})

/** A broker key's value as DescribeConfigs answers it (null: not set, or sensitive). */
function brokerValue(key: BrokerConfigKey<unknown>, config: BrokerConfig): string | null {
  if (key.value.type === 'PASSWORD') return null
  const value = key.get(config)
  return value === null || value === undefined ? null : key.value.format(value)
}

/**
 * A broker key's layers, most specific first: its dynamic values (KIP-226), the static setting
 * when it differs from the default, the default.
 */
function brokerSynonyms(broker: BrokerContext, key: BrokerConfigKey<unknown>): DescribeConfigsSynonym[] {
  if (broker.dynamicConfig) return broker.dynamicConfig.synonyms(key.name)
  const value = brokerValue(key, broker.config)
  const defaultValue = brokerValue(key, DEFAULT_BROKER)
  const out: DescribeConfigsSynonym[] = []
  if (value !== defaultValue) out.push({ name: key.name, value, source: ConfigSource.STATIC_BROKER_CONFIG })
  out.push({ name: key.name, value: defaultValue, source: ConfigSource.DEFAULT_CONFIG })
  return out
}

function entry(name: string, value: string | null, source: number, type: number, readOnly: boolean, synonyms: DescribeConfigsSynonym[]): DescribeConfigsResourceResult {
  return { name, value, readOnly, configSource: source, isSensitive: false, synonyms, configType: type, documentation: null }
}

/** Every config of a topic with these overrides: value, source, synonyms (CreateTopics v5+ returns them too). */
export function topicConfigEntries(broker: BrokerContext, overrides: Record<string, string>, synonymsToo: boolean): DescribeConfigsResourceResult[] {
  return TOPIC_CONFIG_KEYS.map((def) => {
    const own = overrides[def.name]
    const brokerKey = BROKER_CONFIG_KEY.get(def.brokerName)
    const synonyms: DescribeConfigsSynonym[] = []
    if (own !== undefined) synonyms.push({ name: def.name, value: own, source: ConfigSource.DYNAMIC_TOPIC_CONFIG })
    if (brokerKey) synonyms.push(...brokerSynonyms(broker, brokerKey))
    else synonyms.push({ name: def.brokerName, value: def.value.format(def.default), source: ConfigSource.DEFAULT_CONFIG })
    const effective = synonyms[0]!
    return entry(def.name, effective.value, effective.source, ConfigType[def.value.type], false, synonymsToo ? synonyms : [])
  })
}

export function describeConfigsHandler(broker: BrokerContext): ApiHandler<DescribeConfigsRequest, DescribeConfigsResponse> {
  const wanted = (keys: string[] | null, name: string) => keys === null || keys.length === 0 || keys.includes(name)

  const describeTopic = (name: string, keys: string[] | null, synonymsToo: boolean): DescribeConfigsResult => {
    // Kafka describes its internal topics as any other (their configs are those it made them with).
    const internal = [broker.offsetsTopic, broker.transactionStateTopic, broker.shareGroupStateTopic].find((t) => t?.name === name)
    const topic = broker.topics.get(name) ?? internal
    if (!topic) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `no topic ${name}`, resourceType: ConfigResourceType.TOPIC, resourceName: name, configs: [] }
    const configs = topicConfigEntries(broker, topic.configs, synonymsToo).filter((c) => wanted(keys, c.name))
    return { errorCode: ErrorCode.NONE, errorMessage: null, resourceType: ConfigResourceType.TOPIC, resourceName: name, configs }
  }

  const describeBroker = (name: string, keys: string[] | null, synonymsToo: boolean): DescribeConfigsResult => {
    const result: DescribeConfigsResult = { errorCode: ErrorCode.NONE, errorMessage: null, resourceType: ConfigResourceType.BROKER, resourceName: name, configs: [] }
    if (name === '') {
      // The cluster-wide dynamic defaults: those set, each as its own source.
      for (const [key, value] of Object.entries(broker.dynamicConfig?.layer('default') ?? {})) {
        if (!wanted(keys, key)) continue
        const def = BROKER_CONFIG_KEY.get(key)
        const shown = def && def.value.type !== 'PASSWORD' ? value : null
        const synonyms = synonymsToo ? [{ name: key, value: shown, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG }] : []
        result.configs.push({ ...entry(key, shown, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, def ? ConfigType[def.value.type] : ConfigType.UNKNOWN, false, synonyms), isSensitive: shown === null })
      }
      return result
    }
    if (name !== String(broker.config.nodeId)) {
      return { ...result, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `unexpected broker id, expected ${broker.config.nodeId} or the empty string, but received ${name}` }
    }
    for (const key of BROKER_CONFIG_KEYS) {
      if (!wanted(keys, key.name)) continue
      const synonyms = brokerSynonyms(broker, key)
      const { value, source } = synonyms[0]! // every key has at least its default
      // Kafka describes an internal key only when it is set.
      if (key.internal && source === ConfigSource.DEFAULT_CONFIG) continue
      result.configs.push({ ...entry(key.name, value, source, ConfigType[key.value.type], key.dynamic === 'read-only', synonymsToo ? synonyms : []), isSensitive: key.value.type === 'PASSWORD' })
    }
    // Names the table does not know, set on this broker: kept as given, shown as sensitive (Kafka does the same).
    for (const unknown of Object.keys(broker.dynamicConfig?.layer('broker') ?? {}).filter((n) => !BROKER_CONFIG_KEY.has(n) && wanted(keys, n))) {
      const synonyms = synonymsToo ? [{ name: unknown, value: null, source: ConfigSource.DYNAMIC_BROKER_CONFIG }] : []
      result.configs.push({ ...entry(unknown, null, ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigType.UNKNOWN, false, synonyms), isSensitive: true })
    }
    return result
  }

  const describeGroup = async (name: string, keys: string[] | null, synonymsToo: boolean): Promise<DescribeConfigsResult> => ({
    errorCode: ErrorCode.NONE,
    // Kafka 4.4 answers a GROUP resource with an empty message, not null.
    errorMessage: '',
    resourceType: ConfigResourceType.GROUP,
    resourceName: name,
    configs: await describeGroupConfigs(broker, name, keys, synonymsToo),
  })

  return async (request, context) => ({
    throttleTimeMs: 0,
    results: await Promise.all(
      request.resources.map(async (r): Promise<DescribeConfigsResult> => {
        // Kafka's: DESCRIBE_CONFIGS on the topic, the group, or the cluster for a broker.
        const denied = broker.auth.configResourceError(context, AclOperation.DESCRIBE_CONFIGS, r.resourceType, r.resourceName)
        if (denied !== ErrorCode.NONE) return { errorCode: denied, errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] }
        if (r.resourceType === ConfigResourceType.GROUP) return describeGroup(r.resourceName, r.configurationKeys, request.includeSynonyms)
        if (r.resourceType === ConfigResourceType.TOPIC) return describeTopic(r.resourceName, r.configurationKeys, request.includeSynonyms)
        if (r.resourceType === ConfigResourceType.BROKER) return describeBroker(r.resourceName, r.configurationKeys, request.includeSynonyms)
        return {
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `resource type ${r.resourceType} is not supported`,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: [],
        }
      }),
    ),
  })
}
