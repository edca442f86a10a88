/**
 * FetchManager.newContext and the contexts' responses: which request opens, continues or closes
 * a session, the session errors, forgotten partitions, and which partitions an incremental
 * response carries and in what order they are read next (fairness).
 */
import { describe, expect, it } from 'vitest'
import { FetchManager, type FetchContextRequest, type PartitionResponseView, type PartitionResult } from '../../ts/fetch/fetch-context.js'
import { FetchSessionCache, INVALID_SESSION_ID, type FetchPartitionData } from '../../ts/fetch/fetch-session-cache.js'
import { ZERO_UUID } from '../../ts/protocol/apis/fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'

function p(partition: number, fetchOffset = 0n, topic = 't'): FetchPartitionData {
  return { topic, topicId: ZERO_UUID, partition, fetchOffset, logStartOffset: -1n, maxBytes: 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }
}

function req(sessionId: number, sessionEpoch: number, fetchData: FetchPartitionData[] = [], toForget: FetchPartitionData[] = [], version = 12): FetchContextRequest {
  return { version, sessionId, sessionEpoch, isFromFollower: false, fetchData, toForget }
}

interface View extends PartitionResponseView {
  partition: number
}

/** A read result per partition: hw 10, lso 10, log start 0, no records, unless overridden. */
function read(parts: FetchPartitionData[], over: Record<number, Partial<View> & { records?: number }> = {}): PartitionResult<View>[] {
  return parts.map((partition) => {
    const o = over[partition.partition] ?? {}
    return {
      partition,
      recordsSize: o.records ?? 0,
      response: { partition: partition.partition, errorCode: 0, highWatermark: 10n, lastStableOffset: 10n, logStartOffset: 0n, preferredReadReplica: -1, ...o },
    }
  })
}

function setup(maxEntries = 10) {
  let now = 0
  const manager = new FetchManager(new FetchSessionCache({ maxEntries }), () => now)
  /** Runs one request through its context; returns the response and what was read. */
  const fetch = (r: FetchContextRequest, over: Parameters<typeof read>[1] = {}) => {
    const ctx = manager.newContext(r)
    const toRead = ctx.partitionsToRead()
    const res = ctx.updateAndGenerateResponseData(read(toRead, over), now)
    return { kind: ctx.kind, toRead: toRead.map((x) => x.partition), errorCode: res.errorCode, sessionId: res.sessionId, answered: res.partitions.map((x) => x.partition.partition) }
  }
  const open = (parts: FetchPartitionData[]) => fetch(req(0, 0, parts)).sessionId
  return { manager, fetch, open, tick: (ms: number) => (now += ms) }
}

describe('FetchManager.newContext', () => {
  it('sessionId 0 and epoch -1 is sessionless: reads and answers everything, sessionId 0', () => {
    const { fetch, manager } = setup()
    const r = fetch(req(0, -1, [p(0), p(1)]))
    expect(r).toMatchObject({ kind: 'sessionless', sessionId: 0, errorCode: 0, toRead: [0, 1], answered: [0, 1] })
    expect(manager.cache.metrics.sessions).toBe(0)
  })

  it('requests before v7 are sessionless whatever they carry', () => {
    const { fetch } = setup()
    expect(fetch(req(0, 0, [p(0)], [], 6))).toMatchObject({ kind: 'sessionless', sessionId: 0 })
  })

  it('epoch 0 is a full fetch that opens a session expecting epoch 1', () => {
    const { fetch, manager } = setup()
    const r = fetch(req(0, 0, [p(0), p(1)]))
    expect(r).toMatchObject({ kind: 'full', errorCode: 0, answered: [0, 1] })
    expect(r.sessionId).toBeGreaterThan(0)
    expect(manager.cache.get(r.sessionId)).toMatchObject({ epoch: 1, size: 2 })
  })

  it('a full fetch with a non-zero sessionId first removes that session', () => {
    const { fetch, open, manager } = setup()
    const first = open([p(0)])
    const second = fetch(req(first, 0, [p(0)])).sessionId
    expect(second).not.toBe(first)
    expect(manager.cache.get(first)).toBeUndefined()
    expect(manager.cache.metrics.sessions).toBe(1)
  })

  it('a full fetch answers sessionId 0 when the cache has no slot for it', () => {
    const { fetch, open } = setup(1)
    open([p(0)])
    expect(fetch(req(0, 0, [p(0)]))).toMatchObject({ kind: 'full', sessionId: INVALID_SESSION_ID, answered: [0] })
  })

  it('epoch -1 with a sessionId closes the session and is answered sessionless', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0)])
    expect(fetch(req(id, -1, [p(0)]))).toMatchObject({ kind: 'sessionless', sessionId: 0, answered: [0] })
    expect(manager.cache.get(id)).toBeUndefined()
    expect(fetch(req(id, 1))).toMatchObject({ kind: 'error', errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND })
  })

  it('an unknown session id is FETCH_SESSION_ID_NOT_FOUND, with no partitions and sessionId 0', () => {
    const { fetch } = setup()
    expect(fetch(req(12345, 1, [p(0)]))).toEqual({ kind: 'error', toRead: [], errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, answered: [] })
  })

  it('a wrong epoch is INVALID_FETCH_SESSION_EPOCH and leaves the session as it was', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0)])
    expect(fetch(req(id, 2, [p(1)]))).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, answered: [] })
    expect(manager.cache.get(id)).toMatchObject({ epoch: 1, size: 1 })
    expect(fetch(req(id, 1))).toMatchObject({ kind: 'incremental', errorCode: 0 })
  })

  it('a replayed epoch is INVALID_FETCH_SESSION_EPOCH', () => {
    const { fetch, open } = setup()
    const id = open([p(0)])
    fetch(req(id, 1))
    expect(fetch(req(id, 1)).errorCode).toBe(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
  })

  it('topic-id use that does not match the session is FETCH_SESSION_TOPIC_ID_ERROR', () => {
    const { fetch } = setup()
    const byName = fetch(req(0, 0, [p(0)], [], 12)).sessionId
    expect(fetch(req(byName, 1, [], [], 13)).errorCode).toBe(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
    const id = Buffer.alloc(16, 1)
    const byId = fetch(req(0, 0, [{ ...p(0, 0n, ''), topicId: id }], [], 13)).sessionId
    expect(fetch(req(byId, 1, [], [], 12)).errorCode).toBe(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
    expect(fetch(req(byId, 1, [], [], 13)).errorCode).toBe(ErrorCode.NONE)
  })

  it('epochs count up with each incremental fetch; after Int32.MAX comes 1', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0)])
    for (let epoch = 1; epoch <= 5; epoch++) expect(fetch(req(id, epoch)).errorCode).toBe(0)
    manager.cache.get(id)!.epoch = 0x7fffffff
    expect(fetch(req(id, 0x7fffffff)).errorCode).toBe(0)
    expect(manager.cache.get(id)!.epoch).toBe(1)
    expect(fetch(req(id, 1)).errorCode).toBe(0)
  })

  it('a context answered after a later request moved the epoch is INVALID_FETCH_SESSION_EPOCH (delayed fetch)', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0)])
    const parked = manager.newContext(req(id, 1))
    expect(fetch(req(id, 2)).errorCode).toBe(0)
    const res = parked.updateAndGenerateResponseData(read(parked.partitionsToRead(), { 0: { records: 5 } }), 0)
    expect(res).toEqual({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: 0, partitions: [] })
  })

  it('an incremental fetch touches its session (LRU)', () => {
    const { fetch, open, manager, tick } = setup()
    const a = open([p(0)])
    const b = open([p(0)])
    tick(5)
    fetch(req(a, 1))
    expect(manager.cache.ids()).toEqual([b, a])
    expect(manager.cache.get(a)!.lastUsedMs).toBe(5)
  })
})

describe('incremental fetch responses', () => {
  it('answer only partitions with records or a changed high watermark, LSO or log start offset', () => {
    const { fetch, open } = setup()
    const id = open([p(0), p(1), p(2), p(3), p(4)])
    const r = fetch(req(id, 1), { 1: { records: 100 }, 2: { highWatermark: 11n }, 3: { logStartOffset: 5n }, 4: { lastStableOffset: 9n } })
    expect(r).toMatchObject({ kind: 'incremental', sessionId: id, toRead: [0, 1, 2, 3, 4], answered: [1, 2, 3, 4] })
    // Nothing changed since: nothing to say.
    expect(fetch(req(id, 2), { 2: { highWatermark: 11n }, 3: { logStartOffset: 5n }, 4: { lastStableOffset: 9n } }).answered).toEqual([])
  })

  it('answer partitions with an error every time, and once more after the error is gone', () => {
    const { fetch, open } = setup()
    const id = open([p(0), p(1)])
    expect(fetch(req(id, 1), { 0: { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE } }).answered).toEqual([0])
    expect(fetch(req(id, 2), { 0: { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE } }).answered).toEqual([0])
    expect(fetch(req(id, 3)).answered).toEqual([0])
    expect(fetch(req(id, 4)).answered).toEqual([])
  })

  it('answer partitions with a preferred read replica or a diverging epoch', () => {
    const { fetch, open } = setup()
    const id = open([p(0), p(1), p(2)])
    expect(fetch(req(id, 1), { 0: { preferredReadReplica: 2 }, 2: { divergingEpoch: { epoch: 3, endOffset: 5n } } }).answered).toEqual([0, 2])
  })

  it('answer a partition added by an incremental request even when nothing changed', () => {
    const { fetch, open } = setup()
    const id = open([p(0)])
    expect(fetch(req(id, 1, [p(1)]))).toMatchObject({ toRead: [0, 1], answered: [1] })
  })

  it('update the fetch offset of listed partitions without moving them', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0), p(1), p(2)])
    fetch(req(id, 1, [p(0, 50n)]))
    const session = manager.cache.get(id)!
    expect([...session.partitions.values()].map((x) => [x.partition, x.fetchOffset])).toEqual([
      [0, 50n],
      [1, 0n],
      [2, 0n],
    ])
  })

  it('drop forgotten partitions: they are neither read nor answered', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0), p(1), p(2)])
    const r = fetch(req(id, 1, [], [p(1)]), { 1: { records: 10 } })
    expect(r).toMatchObject({ toRead: [0, 2], answered: [] })
    expect(manager.cache.get(id)!.size).toBe(2)
  })

  it('a partition both listed and forgotten ends up forgotten', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0), p(1)])
    expect(fetch(req(id, 1, [p(1, 5n)], [p(1)])).toRead).toEqual([0])
    expect(manager.cache.get(id)!.size).toBe(1)
  })

  it('forgetting every partition closes the session and answers sessionless', () => {
    const { fetch, open, manager } = setup()
    const id = open([p(0)])
    expect(fetch(req(id, 1, [], [p(0)]))).toMatchObject({ kind: 'sessionless', sessionId: 0, toRead: [] })
    expect(manager.cache.get(id)).toBeUndefined()
  })

  it('fairness: partitions that returned records move to the end of the reading order', () => {
    const { fetch, open } = setup()
    const id = open([p(0), p(1), p(2), p(3)])
    expect(fetch(req(id, 1), { 0: { records: 10 }, 2: { records: 10 } })).toMatchObject({ toRead: [0, 1, 2, 3], answered: [0, 2] })
    expect(fetch(req(id, 2), { 1: { records: 10 } })).toMatchObject({ toRead: [1, 3, 0, 2], answered: [1] })
    expect(fetch(req(id, 3)).toRead).toEqual([3, 0, 2, 1])
  })

  it('the full fetch keeps the request order and answers every partition', () => {
    const { fetch } = setup()
    expect(fetch(req(0, 0, [p(2), p(0), p(1)]), { 2: { records: 10 } })).toMatchObject({ toRead: [2, 0, 1], answered: [2, 0, 1] })
  })
})
