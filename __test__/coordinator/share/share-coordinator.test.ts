/**
 * The share coordinator on a real broker's `__share_group_state` log: its writes are appended and
 * replayed, its pruning deletes the records the latest snapshot made redundant (the log start
 * offset moves to it), and a coordinator loading the pruned log again (resigned, then elected in
 * a newer epoch) answers the same state.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { SHARE_GROUP_STATE_TOPIC } from '../../../ts/coordinator/share/share-group-state-topic.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'
import type { Broker } from '../../../ts/server/broker.js'
import { startBroker } from '../../helpers/broker.js'

const ACKNOWLEDGED = 2

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

describe('ShareCoordinator on __share_group_state', () => {
  it('prunes below the latest snapshot, and loads the pruned log to the same state', async () => {
    // A snapshot for every write; pruning only when the test asks.
    broker = await startBroker({ props: { 'share.coordinator.snapshot.update.records.per.snapshot': '0', 'share.coordinator.state.topic.prune.interval.ms': '3600000' } })
    const topic = (await broker.createTopic('jobs', 1, {}))!
    await broker.ensureShareGroupStateTopic()
    const c = broker.shareCoordinator
    const key = { groupId: 'g', topicId: topic.topicId, partition: 0 }
    expect((await c.initializeState(key, 0, 0n)).errorCode).toBe(ErrorCode.NONE)
    for (let i = 1; i <= 5; i++) {
      const stateBatches = [{ firstOffset: BigInt(i), lastOffset: BigInt(i + 2), deliveryState: ACKNOWLEDGED, deliveryCount: 1 }]
      expect((await c.writeState(key, { stateEpoch: 0, leaderEpoch: 0, startOffset: BigInt(i), deliveryCompleteCount: 0, stateBatches })).errorCode).toBe(ErrorCode.NONE)
    }
    const before = await c.readState(key, 0)
    expect(before.data).toEqual({ stateEpoch: 0, startOffset: 5n, stateBatches: [{ firstOffset: 5n, lastOffset: 7n, deliveryState: ACKNOWLEDGED, deliveryCount: 1 }] })
    const partition = c.partitionFor(key)
    const log = broker.logManager.getLog(SHARE_GROUP_STATE_TOPIC, partition)!
    // Offsets 0-5: the initializing snapshot and five more, each superseding the one before.
    expect(log.logEndOffset()).toBe(6n)
    expect(log.logStartOffset()).toBe(0n)
    expect(c.pruneRecords()).toBe(1)
    expect(log.logStartOffset()).toBe(5n)
    expect(c.pruneRecords()).toBe(0)

    c.onResignation(partition, 0)
    expect((await c.readState(key, 0)).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    await c.onElection(partition, 1)
    expect((await c.readState(key, 0)).data).toEqual(before.data)
  })
})
