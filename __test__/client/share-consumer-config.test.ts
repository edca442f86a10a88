/**
 * The ShareConsumer's pure parts: its configuration (Kafka's names, defaults and refusals) and how
 * acknowledgements go on the wire (acknowledgements.ts: runs of consecutive offsets, one type for
 * a run of one type, one per offset otherwise, gaps as type 0). The consumer itself is shown over
 * real sockets against ferrolog and Kafka in interop/share-consumer-vs-kafka.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { Acknowledgements } from '../../ts/client/acknowledgements.js'
import { shareConsumerConfigFrom } from '../../ts/client/share-consumer-config.js'
import { ShareSessionHandler, nextEpoch } from '../../ts/client/share-session-handler.js'

describe('ShareConsumer configuration', () => {
  it("takes Kafka's names and defaults", () => {
    const c = shareConsumerConfigFrom({ 'bootstrap.servers': 'h:9092', 'group.id': 'g', 'share.acknowledgement.mode': 'EXPLICIT', 'max.poll.records': '10', 'client.id': 'Worker-1' })
    expect([c.groupId, c.shareAcknowledgementMode, c.shareAcquireMode, c.maxPollRecords, c.clientId, c.fetchMaxWaitMs]).toEqual(['g', 'explicit', 'batch_optimized', 10, 'Worker-1', 500])
  })

  it('refuses what a share consumer does not have, and a missing group.id', () => {
    const refused = (o: Record<string, unknown>) => {
      try {
        shareConsumerConfigFrom({ bootstrapServers: 'h:9092', groupId: 'g', ...o })
        return 'accepted'
      } catch (e) {
        return (e as Error).message
      }
    }
    expect(refused({ 'auto.offset.reset': 'earliest' })).toBe('auto.offset.reset=earliest: not a share consumer config')
    expect(refused({ 'enable.auto.commit': false })).toBe('enable.auto.commit=false: not a share consumer config')
    expect(refused({ 'share.acknowledgement.mode': 'manual' })).toBe('share.acknowledgement.mode=manual: implicit or explicit')
    expect(refused({ 'share.acquire.mode': 'all' })).toBe('share.acquire.mode=all: batch_optimized or record_limit')
    expect(refused({ groupId: undefined, 'group.id': '' })).toBe('group.id=: a share consumer needs a group.id')
  })
})

describe('Acknowledgements on the wire', () => {
  it('one batch per run of consecutive offsets; one type when the run has one', () => {
    const a = new Acknowledgements()
    for (const o of [5n, 3n, 4n]) a.add(o, 'accept')
    a.add(9n, 'reject')
    a.add(10n, 'release')
    a.addGap(11n)
    a.add(12n, 'renew')
    expect(a.toBatches()).toEqual([
      { firstOffset: 3n, lastOffset: 5n, acknowledgeTypes: [1] },
      { firstOffset: 9n, lastOffset: 12n, acknowledgeTypes: [3, 2, 0, 4] },
    ])
    expect(a.hasRenew).toBe(true)
    expect(a.offsets()).toEqual([3n, 4n, 5n, 9n, 10n, 11n, 12n])
  })

  it('the share session: epochs, partitions named, forgotten ones', () => {
    expect([nextEpoch(0), nextEpoch(7), nextEpoch(0x7fffffff), nextEpoch(-1)]).toEqual([1, 8, 1, -1])
    const s = new ShareSessionHandler(1)
    const t = 'aa'.repeat(16)
    const p0 = { topicId: t, topic: 'jobs', partition: 0 }
    const p1 = { topicId: t, topic: 'jobs', partition: 1 }
    expect(s.isOpen).toBe(false)
    s.onFetchAnswered([p0, p1])
    expect(s.epoch).toBe(1)
    const acks = new Acknowledgements()
    acks.add(2n, 'accept')
    const next = s.fetchTopics([p0], [{ tp: p1, acks }])
    expect(next.topics).toEqual([
      {
        topicId: Buffer.from(t, 'hex'),
        partitions: [
          { partitionIndex: 0, partitionMaxBytes: 0, acknowledgementBatches: [] },
          { partitionIndex: 1, partitionMaxBytes: 0, acknowledgementBatches: [{ firstOffset: 2n, lastOffset: 2n, acknowledgeTypes: [1] }] },
        ],
      },
    ])
    expect(next.forgottenTopicsData).toEqual([{ topicId: Buffer.from(t, 'hex'), partitions: [1] }])
    s.reset()
    expect([s.epoch, s.fetchTopics([], []).forgottenTopicsData]).toEqual([0, []])
  })
})
