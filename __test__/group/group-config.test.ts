/**
 * Group configs (ts/group/group-config.ts, group-config-manager.ts): Kafka 4.4's checks that the
 * tools do not reach with the broker defaults, and the standalone file's durability and refusal.
 */
import { writeFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { GroupConfigError, KAFKA_CONSUMER_GROUP_BROKER_CONFIGS, validateGroupConfigs } from '../../ts/group/group-config.js'
import { FileGroupConfigStorage, GROUP_CONFIGS_FILE, GroupConfigManager } from '../../ts/group/group-config-manager.js'
import { tempDir } from '../helpers/tmp.js'

const refusal = (overrides: Record<string, string>) => {
  try {
    validateGroupConfigs(overrides)
    return null
  } catch (err) {
    expect(err).toBeInstanceOf(GroupConfigError)
    return (err as Error).message
  }
}

describe('group config validation (Kafka 4.4 GroupConfig.validate)', () => {
  it('accepts values within the broker ranges, trimmed, and Kafka share reset strategies', () => {
    expect(validateGroupConfigs({ 'consumer.session.timeout.ms': ' 60000 ', 'share.auto.offset.reset': 'by_duration:P1DT2H', 'streams.acceptable.recovery.lag': '0' })).toEqual({
      'consumer.session.timeout.ms': '60000',
      'share.auto.offset.reset': 'by_duration:P1DT2H',
      'streams.acceptable.recovery.lag': '0',
    })
  })

  it('refuses with the message Kafka gives', () => {
    expect(refusal({ 'share.isolation.level': 'dirty' })).toBe('Invalid value dirty for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted')
    expect(refusal({ 'share.renew.acknowledge.enable': 'yes' })).toBe('Invalid value yes for configuration share.renew.acknowledge.enable: Expected value to be either true or false')
    expect(refusal({ 'streams.task.offset.interval.ms': '1000' })).toBe('streams.task.offset.interval.ms must be greater than or equal to 15000')
    expect(refusal({ 'streams.assignor.name': 'greedy' })).toBe("streams.assignor.name 'greedy' is not a registered task assignor. Registered assignors are: [sticky].")
    expect(refusal({ 'streams.rack.aware.assignment.tags': 'zone,zone' })).toBe('streams.rack.aware.assignment.tags must not contain duplicate tag keys.')
    expect(refusal({ 'share.auto.offset.reset': 'by_duration:-P1D' })).toMatch(/The value must be either 'earliest', 'latest'/)
    expect(refusal({ 'consumer.session.timeout.ms': '2147483648' })).toBe('Invalid value 2147483648 for configuration consumer.session.timeout.ms: Not a number of type INT')
  })

  it("checks the consumer configs against the broker's group.consumer.* settings, the heartbeat's range first as Kafka", () => {
    // Both out of range: Kafka's validateValues checks the heartbeat interval before the session timeout.
    expect(refusal({ 'consumer.session.timeout.ms': '1000', 'consumer.heartbeat.interval.ms': '1000' })).toBe('consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.')
    const broker = { ...KAFKA_CONSUMER_GROUP_BROKER_CONFIGS, sessionTimeoutMs: 20_000, minSessionTimeoutMs: 10_000, minHeartbeatIntervalMs: 1000, maxHeartbeatIntervalMs: 30_000 }
    expect(validateGroupConfigs({ 'consumer.session.timeout.ms': '10000', 'consumer.heartbeat.interval.ms': '1000' }, broker)).toEqual({
      'consumer.session.timeout.ms': '10000',
      'consumer.heartbeat.interval.ms': '1000',
    })
    expect(() => validateGroupConfigs({ 'consumer.session.timeout.ms': '9999' }, broker)).toThrow('consumer.session.timeout.ms must be in the range 10000 to 60000 inclusive.')
    // The broker's session timeout (20000) stands in for the group's.
    expect(() => validateGroupConfigs({ 'consumer.heartbeat.interval.ms': '20000' }, broker)).toThrow('consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms')
    expect(validateGroupConfigs({ 'consumer.heartbeat.interval.ms': '19999' }, broker)).toEqual({ 'consumer.heartbeat.interval.ms': '19999' })
  })
})

describe('FileGroupConfigStorage', () => {
  it('keeps the overrides in ferrolog-group-configs.json; validateOnly and refused changes write nothing', async () => {
    const dir = tempDir('ferrolog-group-configs-')
    const manager = new GroupConfigManager(await FileGroupConfigStorage.load(dir))
    await manager.alter('a', { 'consumer.session.timeout.ms': '50000' }, false)
    await manager.alter('b', { 'share.delivery.count.limit': '3' }, true)
    await expect(manager.alter('a', { 'share.delivery.count.limit': '11' }, false)).rejects.toThrow('share.delivery.count.limit must be in the range 2 to 10 inclusive.')
    expect(JSON.parse(readFileSync(join(dir, GROUP_CONFIGS_FILE), 'utf8'))).toEqual({ version: 1, groups: { a: { 'consumer.session.timeout.ms': '50000' } } })
    const reloaded = new GroupConfigManager(await FileGroupConfigStorage.load(dir))
    expect(await reloaded.overrides('a')).toEqual({ 'consumer.session.timeout.ms': '50000' })
    expect(await reloaded.overrides('b')).toEqual({})
    await reloaded.alter('a', {}, false)
    expect(JSON.parse(readFileSync(join(dir, GROUP_CONFIGS_FILE), 'utf8'))).toEqual({ version: 1, groups: {} })
  })

  it('refuses to start from a file that is not a group configs file, naming it', async () => {
    const dir = tempDir('ferrolog-group-configs-')
    writeFileSync(join(dir, GROUP_CONFIGS_FILE), '{"version":1,"groups":{"a":{"x":1}}}')
    await expect(FileGroupConfigStorage.load(dir)).rejects.toMatchObject({ code: 'STORAGE_ERROR', message: expect.stringContaining(GROUP_CONFIGS_FILE) })
  })
})
