/**
 * The Admin against ferrolog (admin-scenarios.ts; the same against Apache Kafka 4.4 in
 * admin-kafka.test.ts), on an in-process broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Admin } from '../../ts/client/admin.js'
import * as ferrolog from '../../ts/index.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import { clusterScenario, configsScenario, groupsScenario, offsetsScenario, topicsScenario } from './admin-scenarios.js'

let broker: Broker
let bootstrap: string

beforeAll(async () => {
  broker = await startBroker({ config: { 'auto.create.topics.enable': 'false' } })
  bootstrap = broker.bootstrapServers
})

afterAll(async () => {
  await broker?.stop()
})

describe('Admin against ferrolog', () => {
  it('is exported from the package, with its config', () => {
    expect(ferrolog.Admin).toBe(Admin)
    expect(() => ferrolog.adminConfigFrom({})).toThrow(/bootstrap.servers is required/)
    expect(ferrolog.adminConfigFrom({ bootstrapServers: 'h:1', 'default.api.timeout.ms': '5000' }).defaultApiTimeoutMs).toBe(5000)
    expect(() => ferrolog.adminConfigFrom({ bootstrapServers: 'h:1', 'linger.ms': 5 })).toThrow(/not an admin config/)
  })

  it('topics: create, list, describe, add partitions, delete; per-topic errors', { timeout: 60_000 }, async () => {
    await topicsScenario(bootstrap, 'topics')
  })

  it('configs: describe with sources, incremental alter (set, delete), per-resource errors', { timeout: 60_000 }, async () => {
    await configsScenario(bootstrap, 'configs')
  })

  it("groups: a Consumer group's offsets listed, altered, deleted; the group described and deleted", { timeout: 90_000 }, async () => {
    await groupsScenario(bootstrap, 'groups')
  })

  it('listOffsets (earliest, latest, timestamp, max timestamp) and deleteRecords', { timeout: 60_000 }, async () => {
    await offsetsScenario(bootstrap, 'offsets')
  })

  it('describeCluster, describeTransactions and describeProducers of a transactional Producer', { timeout: 60_000 }, async () => {
    await clusterScenario(bootstrap, 'cluster')
  })
})
