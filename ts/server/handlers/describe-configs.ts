/**
 * DescribeConfigs for TOPIC and BROKER resources, with Kafka's config names, sources and types.
 *
 * A topic config is the topic's own value (source DYNAMIC_TOPIC_CONFIG) when CreateTopics set it,
 * else the broker's (`log.*` settings): STATIC_BROKER_CONFIG when it differs from Kafka's
 * default, DEFAULT_CONFIG otherwise. With includeSynonyms, each config lists where its value
 * could come from, most specific first (topic override, broker setting, default), as Kafka does.
 * A BROKER resource is this broker by its node id; the cluster-wide default resource ("") has no
 * dynamic configs, hence none. Other broker ids and other resource types -> INVALID_REQUEST.
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

export { ConfigType } from '../../config/config-def.js'

/** Kafka's DescribeConfigsResponse ConfigSource codes. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
} as const

/** The broker's settings when nothing is configured: what tells a static setting from a default. */
const DEFAULT_BROKER = brokerConfigFrom({})

/** A broker key's value as DescribeConfigs answers it (null: not set, or sensitive). */
function brokerValue(key: BrokerConfigKey<unknown>, config: BrokerConfig): string | null {
  if (key.value.type === 'PASSWORD') return null
  const value = key.get(config)
  return value === null || value === undefined ? null : key.value.format(value)
}

function entry(name: string, value: string | null, source: number, type: number, readOnly: boolean, synonyms: DescribeConfigsSynonym[]): DescribeConfigsResourceResult {
  return { name, value, readOnly, configSource: source, isSensitive: false, synonyms, configType: type, documentation: null }
}

/** Every config of a topic with these overrides: value, source, synonyms (CreateTopics v5+ returns them too). */
export function topicConfigEntries(broker: BrokerContext, overrides: Record<string, string>, synonymsToo: boolean): DescribeConfigsResourceResult[] {
  return TOPIC_CONFIG_KEYS.map((def) => {
    const own = overrides[def.name]
    const brokerKey = BROKER_CONFIG_KEY.get(def.brokerName)
    const brokerSetting = brokerKey ? brokerValue(brokerKey, broker.config) : null
    const defaultValue = brokerKey ? brokerValue(brokerKey, DEFAULT_BROKER)! : def.value.format(def.default)
    const synonyms: DescribeConfigsSynonym[] = []
    if (own !== undefined) synonyms.push({ name: def.name, value: own, source: ConfigSource.DYNAMIC_TOPIC_CONFIG })
    if (brokerSetting !== null && brokerSetting !== defaultValue) synonyms.push({ name: def.brokerName, value: brokerSetting, source: ConfigSource.STATIC_BROKER_CONFIG })
    synonyms.push({ name: def.brokerName, value: defaultValue, source: ConfigSource.DEFAULT_CONFIG })
    const effective = synonyms[0]
    return entry(def.name, effective.value, effective.source, ConfigType[def.value.type], false, synonymsToo ? synonyms : [])
  })
}

export function describeConfigsHandler(broker: BrokerContext): ApiHandler<DescribeConfigsRequest, DescribeConfigsResponse> {
  const wanted = (keys: string[] | null, name: string) => keys === null || keys.length === 0 || keys.includes(name)

  const describeTopic = (name: string, keys: string[] | null, synonymsToo: boolean): DescribeConfigsResult => {
    const topic = broker.topics.get(name)
    if (!topic) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `no topic ${name}`, resourceType: ConfigResourceType.TOPIC, resourceName: name, configs: [] }
    const configs = topicConfigEntries(broker, topic.configs, synonymsToo).filter((c) => wanted(keys, c.name))
    return { errorCode: ErrorCode.NONE, errorMessage: null, resourceType: ConfigResourceType.TOPIC, resourceName: name, configs }
  }

  const describeBroker = (name: string, keys: string[] | null, synonymsToo: boolean): DescribeConfigsResult => {
    const result: DescribeConfigsResult = { errorCode: ErrorCode.NONE, errorMessage: null, resourceType: ConfigResourceType.BROKER, resourceName: name, configs: [] }
    if (name === '') return result // the cluster-wide dynamic defaults: none
    if (name !== String(broker.config.nodeId)) {
      return { ...result, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `unexpected broker id, expected ${broker.config.nodeId} or the empty string, but received ${name}` }
    }
    for (const key of BROKER_CONFIG_KEYS) {
      if (!wanted(keys, key.name)) continue
      const value = brokerValue(key, broker.config)
      const source = value !== brokerValue(key, DEFAULT_BROKER) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG
      const synonyms = synonymsToo ? [{ name: key.name, value, source }] : []
      result.configs.push({ ...entry(key.name, value, source, ConfigType[key.value.type], true, synonyms), isSensitive: key.value.type === 'PASSWORD' })
    }
    return result
  }

  return (request) => ({
    throttleTimeMs: 0,
    results: request.resources.map((r): DescribeConfigsResult => {
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
  })
}
