/**
 * The work-queue scenario of ferrolog's ShareConsumer (ts/client/share-consumer.ts), run against
 * any broker (share-consumer-vs-kafka.test.ts runs it against ferrolog and Apache Kafka 4.4):
 * four ShareConsumers in one share group over one partition of `records` records.
 *
 * - implicit: four consumers in the default mode, reading with `for await`: every record is
 *   delivered once, with delivery count 1, and accepted (at the next poll or close).
 * - explicit: three workers acknowledge by the record's value: i % 10 == 3 released on its first
 *   delivery (then accepted), i % 10 == 7 rejected, the rest accepted; a fourth consumer polls
 *   once and stops (no acknowledgement, no close, its heartbeats go on): what it holds comes back
 *   to the workers after share.record.lock.duration.ms, with its delivery count up. Then the
 *   stalled consumer acknowledges what it held: the broker answers INVALID_RECORD_STATE (the
 *   records are not its any more), through commitSync and the acknowledgement commit callback.
 *
 * A log of acquisitions (consumer, delivery count, when the poll returned the record, when it
 * was settled) shows that no record was held by two consumers at once: the next delivery of a
 * record came after the previous holder released it, or after its lock ended. The checks are
 * sound against a correct broker whatever the timing (the client's clock only: a record
 * released at t is acquired by the broker after t; one a poll started at t returned was
 * acquired after t, so its lock ended after t + lock).
 */
import { Admin } from '../../ts/client/admin.js'
import { Producer } from '../../ts/client/producer.js'
import { ShareConsumer, type ShareConsumerRecord } from '../../ts/client/share-consumer.js'

export const LOCK_MS = 4000

interface Acquisition {
  consumer: string
  deliveryCount: number
  /** When the poll that returned it returned. */
  receivedAt: number
  /** When it was released (only releases are followed by another delivery). */
  releasedAt?: number
  /** A time before it was acquired (for a record never settled: its lock ended after this + LOCK_MS). */
  acquiredAfter: number
  settled?: 'accept' | 'release' | 'reject'
}

async function setUp(bootstrap: string, topic: string, group: string, records: number): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap })
  try {
    await admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]).all()
    await admin
      .incrementalAlterConfigs([
        [
          { type: 'GROUP', name: group },
          [
            { name: 'share.auto.offset.reset', value: 'earliest', opType: 'SET' },
            { name: 'share.record.lock.duration.ms', value: String(LOCK_MS), opType: 'SET' },
          ],
        ],
      ])
      .all()
  } finally {
    await admin.close()
  }
  const producer = new Producer({ bootstrapServers: bootstrap, 'linger.ms': 5 })
  try {
    const sends: Promise<unknown>[] = []
    for (let i = 0; i < records; i++) {
      sends.push(producer.send({ topic, key: `k${i}`, value: String(i) }))
      if (sends.length >= 5000) await Promise.all(sends.splice(0))
    }
    await Promise.all(sends)
  } finally {
    await producer.close()
  }
}

const value = (r: ShareConsumerRecord) => Number(r.value!.toString())

/** Implicit mode: what the four consumers saw. */
export async function implicitScenario(bootstrap: string, records: number): Promise<Record<string, unknown>> {
  const topic = 'ts-implicit'
  await setUp(bootstrap, topic, topic, records)
  const consumers = [0, 1, 2, 3].map(() => new ShareConsumer({ bootstrapServers: bootstrap, groupId: topic, 'max.poll.records': 100 }))
  const seen = new Map<number, number>()
  const counts = new Map<number, number>()
  const errors: string[] = []
  let done: () => void
  const allSeen = new Promise<void>((r) => (done = r))
  for (const c of consumers) {
    c.setAcknowledgementCommitCallback((_offsets, error) => {
      if (error) errors.push(error.code)
    })
    c.subscribe([topic])
  }
  const loops = consumers.map(async (c) => {
    for await (const r of c) {
      seen.set(value(r), (seen.get(value(r)) ?? 0) + 1)
      counts.set(r.deliveryCount, (counts.get(r.deliveryCount) ?? 0) + 1)
      if (seen.size === records) done()
    }
  })
  await allSeen
  await Promise.all(consumers.map((c) => c.close()))
  await Promise.all(loops)
  return {
    distinct: seen.size,
    deliveries: [...seen.values()].reduce((a, b) => a + b, 0),
    deliveryCounts: Object.fromEntries(counts),
    ackErrors: errors,
  }
}

/** Explicit mode, with a consumer that stalls: what was seen, and the acquisition log's verdicts. */
export async function explicitScenario(bootstrap: string, records: number): Promise<Record<string, unknown>> {
  const topic = 'ts-explicit'
  await setUp(bootstrap, topic, topic, records)
  const log = new Map<number, Acquisition[]>()
  const acquired = (consumer: string, r: ShareConsumerRecord, acquiredAfter: number, receivedAt: number) => {
    const list = log.get(value(r)) ?? []
    list.push({ consumer, deliveryCount: r.deliveryCount, receivedAt, acquiredAfter })
    log.set(value(r), list)
    return list[list.length - 1]!
  }
  const options = { bootstrapServers: bootstrap, groupId: topic, 'share.acknowledgement.mode': 'explicit', 'max.poll.records': 100 }
  const staller = new ShareConsumer(options)
  const workers = [0, 1, 2].map(() => new ShareConsumer(options))
  const callbackErrors: string[] = []
  for (const w of workers)
    w.setAcknowledgementCommitCallback((_offsets, error) => {
      if (error) callbackErrors.push(error.code)
    })
  try {
    // The stalled consumer first: it gets records, then stops.
    staller.subscribe([topic])
    let held: ShareConsumerRecord[] = []
    // The records a poll returns may come from a fetch an earlier poll sent: the first poll's start bounds when they were acquired.
    const started = Date.now()
    for (let i = 0; i < 600 && held.length === 0; i++) {
      held = await staller.poll(1000)
      for (const r of held) acquired('staller', r, started, Date.now())
    }
    let settled = 0
    const target = records
    for (const w of workers) w.subscribe([topic])
    await Promise.all(
      workers.map(async (w, i) => {
        const started = Date.now()
        while (settled < target) {
          const batch = await w.poll(500)
          const at = Date.now()
          for (const r of batch) {
            const a = acquired(`worker${i}`, r, started, at)
            const v = value(r)
            const type = v % 10 === 3 && r.deliveryCount === 1 ? 'release' : v % 10 === 7 ? 'reject' : 'accept'
            if (type === 'release') a.releasedAt = Date.now()
            w.acknowledge(r, type)
            a.settled = type
            if (type !== 'release') settled++
          }
          if (batch.length > 0) await w.commitSync()
        }
      }),
    )

    // The verdicts.
    let heldTwice = 0
    let countNotUp = 0
    let acceptedTwice = 0
    let deliveredAfterSettled = 0
    const outcome = { accepted: 0, rejected: 0, acceptedAtCountUp: 0 }
    let stallerRedeliveredWithCountUp = 0
    for (const [v, list] of log) {
      list.sort((a, b) => a.deliveryCount - b.deliveryCount || a.receivedAt - b.receivedAt)
      for (let i = 1; i < list.length; i++) {
        const prev = list[i - 1]!
        const next = list[i]!
        if (next.deliveryCount <= prev.deliveryCount) countNotUp++
        if (prev.settled === 'accept' || prev.settled === 'reject') deliveredAfterSettled++
        const freeAt = prev.settled === 'release' ? prev.releasedAt! : prev.acquiredAfter + LOCK_MS
        if (next.receivedAt < freeAt) heldTwice++
      }
      const accepts = list.filter((a) => a.settled === 'accept').length
      if (accepts > 1) acceptedTwice++
      if (v % 10 === 7) outcome.rejected += list.some((a) => a.settled === 'reject') ? 1 : 0
      else if (accepts === 1) outcome.accepted++
      // Released on its first delivery, or held by the stalled consumer until its lock ended: accepted at a later one.
      if (v % 10 === 3 && accepts === 1 && list.find((a) => a.settled === 'accept')!.deliveryCount > 1) outcome.acceptedAtCountUp++
      if (list[0]!.consumer === 'staller' && list.length > 1 && list[1]!.deliveryCount > list[0]!.deliveryCount) stallerRedeliveredWithCountUp++
    }
    return {
      distinct: log.size,
      outcome,
      stallerHeld: held.length > 0,
      stallerRedeliveredWithCountUp: stallerRedeliveredWithCountUp === held.length,
      heldTwice,
      countNotUp,
      acceptedTwice,
      deliveredAfterSettled,
      workerAckErrors: callbackErrors,
    }
  } finally {
    await Promise.all([staller, ...workers].map((c) => c.close()))
  }
}

/**
 * A late acknowledgement: consumer A holds the only record and stops; once A's lock ended B gets
 * it (delivery count 2) and holds it; A's acceptance then fails with Kafka's
 * INVALID_RECORD_STATE, from commitSync and through the acknowledgement commit callback; B's
 * succeeds.
 */
export async function lateAcknowledgementScenario(bootstrap: string): Promise<Record<string, unknown>> {
  const topic = 'ts-late'
  await setUp(bootstrap, topic, topic, 1)
  const options = { bootstrapServers: bootstrap, groupId: topic, 'share.acknowledgement.mode': 'explicit' }
  const a = new ShareConsumer(options)
  const b = new ShareConsumer(options)
  const callback: Array<{ offsets: string[]; error: string | null }> = []
  a.setAcknowledgementCommitCallback((offsets, error) => callback.push({ offsets: [...offsets.values()].flatMap((s) => [...s].map(String)), error: error?.code ?? null }))
  try {
    a.subscribe([topic])
    let held: ShareConsumerRecord[] = []
    for (let i = 0; i < 600 && held.length === 0; i++) held = await a.poll(1000)
    b.subscribe([topic])
    let again: ShareConsumerRecord[] = []
    for (let i = 0; i < 600 && again.length === 0; i++) again = await b.poll(1000)
    a.acknowledge(held[0]!, 'accept')
    const aCommit = [...(await a.commitSync()).values()].map((e) => e?.code ?? null)
    b.acknowledge(again[0]!, 'accept')
    const bCommit = [...(await b.commitSync()).values()].map((e) => e?.code ?? null)
    return {
      first: held.map((r) => [r.offset, r.deliveryCount]),
      second: again.map((r) => [r.offset, r.deliveryCount]),
      aCommit,
      aCallback: callback,
      bCommit,
      // In explicit mode a poll with a record not acknowledged is refused (Java's IllegalStateException).
      unacknowledged: await (async () => {
        const c = new ShareConsumer(options)
        try {
          await setUpMore(bootstrap, topic)
          c.subscribe([topic])
          let got: ShareConsumerRecord[] = []
          for (let i = 0; i < 600 && got.length === 0; i++) got = await c.poll(1000)
          return await c.poll(0).then(
            () => 'no error',
            (e: Error & { code?: string }) => `${e.code}: ${e.message}`,
          )
        } finally {
          await c.close()
        }
      })(),
    }
  } finally {
    await Promise.all([a.close(), b.close()])
  }
}

async function setUpMore(bootstrap: string, topic: string): Promise<void> {
  const producer = new Producer({ bootstrapServers: bootstrap })
  try {
    await producer.send({ topic, key: 'k', value: '1' })
  } finally {
    await producer.close()
  }
}
