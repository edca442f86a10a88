/**
 * AlterConfigs and IncrementalAlterConfigs through a socket: each operation's effect on a topic's
 * overrides, the errors per resource, validateOnly, and the live logs following.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { alterConfigsCodec } from '../../ts/protocol/apis/alter-configs.js'
import { ConfigResourceType } from '../../ts/protocol/apis/describe-configs.js'
import { ConfigOperation, incrementalAlterConfigsCodec, type IncrementalAlterableConfig } from '../../ts/protocol/apis/incremental-alter-configs.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

const { TOPIC, BROKER } = ConfigResourceType
let broker: Broker
let client: NetworkClient

beforeEach(async () => {
  broker = await startBroker()
  client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
})
afterEach(async () => {
  await client.close()
  await broker.stop()
})

const incremental = (resourceName: string, configs: IncrementalAlterableConfig[], validateOnly = false, version = 1) =>
  client.send(incrementalAlterConfigsCodec, version, { resources: [{ resourceType: TOPIC, resourceName, configs }], validateOnly })
const set = (name: string, value: string | null) => ({ name, configOperation: ConfigOperation.SET, value })

describe('IncrementalAlterConfigs', () => {
  it('SET and DELETE change only the configs named; the logs follow at once', async () => {
    await broker.createTopic('inc', 2, { 'retention.ms': '5000', 'segment.bytes': '100000' })
    const r = await incremental('inc', [set('retention.bytes', '777'), { name: 'segment.bytes', configOperation: ConfigOperation.DELETE, value: null }])
    expect(r.responses).toEqual([{ errorCode: ErrorCode.NONE, errorMessage: null, resourceType: TOPIC, resourceName: 'inc' }])
    expect(broker.topics.get('inc')!.configs).toEqual({ 'retention.ms': '5000', 'retention.bytes': '777' })
    for (const p of [0, 1]) {
      expect(broker.logManager.getLog('inc', p)!.config).toMatchObject({ retentionMs: 5000, retentionBytes: 777, segmentBytes: broker.config.logDefaults.segmentBytes })
    }
  })

  it('APPEND and SUBTRACT work on list configs and are refused for the others', async () => {
    await broker.createTopic('lists', 1, {})
    const append = await incremental('lists', [{ name: 'cleanup.policy', configOperation: ConfigOperation.APPEND, value: 'delete' }])
    expect(append.responses[0].errorCode).toBe(ErrorCode.NONE)
    expect(broker.topics.get('lists')!.configs).toEqual({ 'cleanup.policy': 'delete' })
    const compact = await incremental('lists', [{ name: 'cleanup.policy', configOperation: ConfigOperation.APPEND, value: 'compact' }])
    expect(compact.responses[0].errorCode).toBe(ErrorCode.NONE)
    expect(broker.topics.get('lists')!.configs).toEqual({ 'cleanup.policy': 'delete,compact' })
    expect(broker.logManager.getLog('lists', 0)!.config.cleanupPolicy).toEqual(['delete', 'compact'])
    const bad = await incremental('lists', [{ name: 'cleanup.policy', configOperation: ConfigOperation.APPEND, value: 'shred' }])
    expect(bad.responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete' })
    const subtract = await incremental('lists', [{ name: 'cleanup.policy', configOperation: ConfigOperation.SUBTRACT, value: 'delete' }])
    expect(subtract.responses[0].errorCode).toBe(ErrorCode.NONE)
    const onInt = await incremental('lists', [{ name: 'retention.ms', configOperation: ConfigOperation.SUBTRACT, value: '1' }])
    expect(onInt.responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Config value subtract is not allowed for config key: retention.ms' })
    expect(broker.topics.get('lists')!.configs).toEqual({ 'cleanup.policy': 'compact' })
    expect(broker.logManager.getLog('lists', 0)!.config.cleanupPolicy).toEqual(['compact'])
  })

  it('answers each resource with its own error and changes nothing for validateOnly', async () => {
    await broker.createTopic('v', 1, {})
    const r = await client.send(incrementalAlterConfigsCodec, 0, {
      resources: [
        { resourceType: TOPIC, resourceName: 'v', configs: [set('retention.ms', '1000')] },
        { resourceType: TOPIC, resourceName: 'ghost', configs: [set('retention.ms', '1000')] },
        { resourceType: TOPIC, resourceName: 'v', configs: [set('retention.ms', '1'), set('retention.ms', '2')] },
        { resourceType: TOPIC, resourceName: 'v', configs: [set('retention.ms', null)] },
        { resourceType: TOPIC, resourceName: 'v', configs: [set('no.such', '1')] },
        // A dynamic broker config (KIP-226): accepted, and with validateOnly not applied.
        { resourceType: BROKER, resourceName: String(broker.config.nodeId), configs: [set('log.retention.ms', '1')] },
        // A read-only one: INVALID_REQUEST, as Kafka answers.
        { resourceType: BROKER, resourceName: String(broker.config.nodeId), configs: [set('log.dirs', '/elsewhere')] },
        { resourceType: BROKER, resourceName: '99', configs: [set('log.retention.ms', '1')] },
        { resourceType: ConfigResourceType.BROKER_LOGGER, resourceName: '0', configs: [] },
      ],
      validateOnly: true,
    })
    expect(r.responses.map((x) => [x.resourceName, x.errorCode])).toEqual([
      ['v', ErrorCode.NONE],
      ['ghost', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['v', ErrorCode.INVALID_REQUEST],
      ['v', ErrorCode.INVALID_REQUEST],
      ['v', ErrorCode.INVALID_CONFIG],
      [String(broker.config.nodeId), ErrorCode.NONE],
      [String(broker.config.nodeId), ErrorCode.INVALID_REQUEST],
      ['99', ErrorCode.INVALID_REQUEST],
      ['0', ErrorCode.INVALID_REQUEST],
    ])
    expect(broker.topics.get('v')!.configs).toEqual({})
    expect(broker.logManager.getLog('v', 0)!.config.retentionMs).toBe(broker.config.logDefaults.retentionMs)
    expect(broker.config.logDefaults.retentionMs).not.toBe(1)
    expect(broker.config.dataDir).not.toBe('/elsewhere')
  })
})

describe('AlterConfigs', () => {
  it('replaces the whole set of overrides (v0 and flexible v2)', async () => {
    await broker.createTopic('whole', 1, { 'retention.ms': '5000', 'segment.bytes': '100000' })
    for (const version of [0, 2]) {
      const r = await client.send(alterConfigsCodec, version, {
        resources: [{ resourceType: TOPIC, resourceName: 'whole', configs: [{ name: 'retention.bytes', value: String(1000 + version) }] }],
        validateOnly: false,
      })
      expect(r.responses[0].errorCode).toBe(ErrorCode.NONE)
      expect(broker.topics.get('whole')!.configs).toEqual({ 'retention.bytes': String(1000 + version) })
      expect(broker.logManager.getLog('whole', 0)!.config).toMatchObject({ retentionBytes: 1000 + version, retentionMs: broker.config.logDefaults.retentionMs })
    }
    const nullValue = await client.send(alterConfigsCodec, 1, { resources: [{ resourceType: TOPIC, resourceName: 'whole', configs: [{ name: 'retention.ms', value: null }] }], validateOnly: false })
    expect(nullValue.responses[0].errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(broker.topics.get('whole')!.configs).toEqual({ 'retention.bytes': '1002' })
  })
})
