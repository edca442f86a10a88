/**
 * Fault injection in the embedded broker (ts/server/fault-injector.ts) with ferrolog's own
 * Producer: injected NOT_LEADER_OR_FOLLOWER and REQUEST_TIMED_OUT answers and closed
 * connections are retried, and the idempotent producer leaves every record once, in order; a
 * held answer goes out when released; latency shows; clearInjections restores normal service;
 * every hit is in the broker's log; a broker started without `faultInjection` refuses inject().
 * kafkajs and @platformatic/kafka through the same faults: __test__/interop/fault-injection-clients.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { Producer } from '../../ts/client/producer.js'
import { ApiKey } from '../../ts/protocol/apis/api.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import { FaultInjectionError } from '../../ts/server/fault-injector.js'
import { startBroker as startPlainBroker } from '../helpers/broker.js'
import { capturingLogger, partitionBatches, partitionValues, settled, values } from '../helpers/fault-injection.js'

let broker: Broker | undefined
let producer: Producer | undefined
afterEach(async () => {
  await producer?.close({ timeoutMs: 0 }).catch(() => undefined)
  producer = undefined
  await broker?.stop()
  broker = undefined
})

function newProducer(bootstrap: string, options: Record<string, unknown> = {}): Producer {
  return new Producer({ bootstrapServers: bootstrap, 'client.id': 'fault-test', 'linger.ms': 0, 'retry.backoff.ms': 20, 'retry.backoff.max.ms': 100, ...options })
}

/** Sends `vals` one at a time (each its own Produce request), in order. */
async function sendEach(p: Producer, topic: string, vals: string[]): Promise<bigint[]> {
  const offsets: bigint[] = []
  for (const value of vals) offsets.push((await p.send({ topic, partition: 0, value })).offset)
  return offsets
}

describe('fault injection: ferrolog Producer', () => {
  it('retries injected NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT and closed connections; every record once, in order', { timeout: 60_000 }, async () => {
    const log = capturingLogger()
    broker = await startBroker({ faultInjection: true, logger: log.logger })
    await broker.createTopic('faults', 1, {})
    producer = newProducer(broker.bootstrapServers)
    await producer.send({ topic: 'faults', partition: 0, value: 'warm-up' })

    const notLeader = broker.inject({ name: 'not-leader', apiKey: 'Produce', topic: 'faults', error: 'NOT_LEADER_OR_FOLLOWER', times: 3 })
    const timedOut = broker.inject({ name: 'timed-out', apiKey: ApiKey.Produce, partition: 0, error: ErrorCode.REQUEST_TIMED_OUT, times: 2 })
    // The append happens, the answer is lost: the retry is a duplicate the broker must drop.
    const lostAnswer = broker.inject({ name: 'lost-answer', apiKey: 'Produce', close: 'after-handling', times: 2 })
    const closed = broker.inject({ name: 'closed', apiKey: 'Produce', close: 'before-handling', times: 1 })
    const sent = values('r', 6)
    const offsets = await sendEach(producer, 'faults', sent)

    expect([notLeader.hits, timedOut.hits, lostAnswer.hits, closed.hits]).toEqual([3, 2, 2, 1])
    expect(notLeader.exhausted && timedOut.exhausted && lostAnswer.exhausted && closed.exhausted).toBe(true)
    expect(partitionValues(broker, 'faults')).toEqual(['warm-up', ...sent])
    expect(offsets).toEqual([1n, 2n, 3n, 4n, 5n, 6n])
    const batches = partitionBatches(broker, 'faults')
    expect(new Set(batches.map((b) => b.producerId)).size).toBe(1)
    expect(batches.map((b) => b.baseSequence)).toEqual([0, 1, 2, 3, 4, 5, 6])

    // Every hit logged at info: the rule, the API and the client; never a record.
    const hits = log.lines.filter((l) => l.msg === 'fault injected')
    expect(hits.map((l) => l.fields['rule'])).toEqual(['not-leader', 'not-leader', 'not-leader', 'timed-out', 'timed-out', 'lost-answer', 'lost-answer', 'closed'])
    expect(hits.every((l) => l.level === 'info' && l.fields['api'] === 'Produce' && l.fields['clientId'] === 'fault-test')).toBe(true)
    expect(hits[0]!.fields).toMatchObject({ error: 'NOT_LEADER_OR_FOLLOWER', partitions: ['faults-0'] })
    expect(JSON.stringify(hits)).not.toContain('r-0')
  })

  it('the Consumer reads every record once, in order, through Fetch, ListOffsets and OffsetCommit faults', { timeout: 60_000 }, async () => {
    const log = capturingLogger()
    broker = await startBroker({ faultInjection: true, logger: log.logger })
    await broker.createTopic('consumed', 1, {})
    producer = newProducer(broker.bootstrapServers)
    const sent = values('c', 30)
    await sendEach(producer, 'consumed', sent.slice(0, 10))
    const listOffsets = broker.inject({ apiKey: 'ListOffsets', topic: 'consumed', error: 'NOT_LEADER_OR_FOLLOWER', times: 2 })
    const fetchNotLeader = broker.inject({ apiKey: 'Fetch', topic: 'consumed', error: 'NOT_LEADER_OR_FOLLOWER', times: 3 })
    const commitTimedOut = broker.inject({ apiKey: 'OffsetCommit', error: 'REQUEST_TIMED_OUT', times: 1 })
    const consumer = new Consumer({
      bootstrapServers: broker.bootstrapServers,
      groupId: 'fault-group',
      clientId: 'fault-consumer',
      'auto.offset.reset': 'earliest',
      'enable.auto.commit': false,
      'retry.backoff.ms': 20,
    })
    const read: string[] = []
    try {
      consumer.subscribe(['consumed'])
      let closedFetch: ReturnType<Broker['inject']> | undefined
      const deadline = Date.now() + 40_000
      while (read.length < sent.length && Date.now() < deadline) {
        for (const batch of await consumer.poll(500)) for (const r of batch.records) read.push(r.value!.toString())
        if (read.length >= 10 && !closedFetch) {
          // Mid-stream: a fetch whose connection closes, then more records.
          closedFetch = broker.inject({ apiKey: 'Fetch', clientId: 'fault-consumer', close: true, times: 1 })
          await sendEach(producer, 'consumed', sent.slice(10))
        }
      }
      expect(closedFetch?.hits).toBe(1)
      // A commit answered REQUEST_TIMED_OUT is retriable: the Consumer's commit retries it.
      await consumer.commit()
      expect([...(await consumer.committed([{ topic: 'consumed', partition: 0 }])).values()]).toEqual([30n])
    } finally {
      await consumer.close()
    }
    expect(read).toEqual(sent)
    expect([listOffsets.hits, fetchNotLeader.hits, commitTimedOut.hits]).toEqual([2, 3, 1])
    const apis = log.lines.filter((l) => l.msg === 'fault injected').map((l) => l.fields['api'])
    expect(new Set(apis)).toEqual(new Set(['ListOffsets', 'Fetch', 'OffsetCommit']))
  })

  it('an error for a Produce with acks=0 closes its connection, as Kafka does: the record is not appended', { timeout: 30_000 }, async () => {
    const log = capturingLogger()
    broker = await startBroker({ faultInjection: true, logger: log.logger })
    await broker.createTopic('acks0', 1, {})
    producer = newProducer(broker.bootstrapServers, { acks: 0, 'enable.idempotence': false })
    await producer.send({ topic: 'acks0', partition: 0, value: 'kept' })
    await expect.poll(() => partitionValues(broker!, 'acks0')).toEqual(['kept'])
    const rule = broker.inject({ name: 'acks0-error', apiKey: 'Produce', error: 'NOT_LEADER_OR_FOLLOWER', times: 1 })
    await producer.send({ topic: 'acks0', partition: 0, value: 'dropped' })
    await rule.whenHit()
    await expect.poll(() => log.lines.some((l) => l.msg === 'closing connection' && String(l.fields['reason']).includes('acks0-error'))).toBe(true)
    // acks=0 promises nothing: records written before the client sees the close are lost too.
    // It reconnects once it sees it, and the records sent then land.
    for (let i = 0; i < 100 && partitionValues(broker, 'acks0').length < 2; i++) {
      await producer.send({ topic: 'acks0', partition: 0, value: 'after' })
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const landed = partitionValues(broker, 'acks0')
    expect(landed[0]).toBe('kept')
    expect(landed.length).toBeGreaterThan(1)
    expect(landed.slice(1).every((v) => v === 'after')).toBe(true)
  })

  it('holds an answer until released; the record is appended meanwhile and acknowledged once', { timeout: 30_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('held', 1, {})
    producer = newProducer(broker.bootstrapServers)
    await producer.send({ topic: 'held', partition: 0, value: 'before' })
    const hold = broker.inject({ apiKey: 'Produce', topic: 'held', hold: true, times: 1 })
    const pending = producer.send({ topic: 'held', partition: 0, value: 'held' })
    await hold.whenHit()
    // Handled (appended) but not answered.
    await expect.poll(() => partitionValues(broker!, 'held')).toEqual(['before', 'held'])
    expect(hold.held).toBe(1)
    expect(await settled(pending)).toBe(false)
    hold.release()
    expect((await pending).offset).toBe(1n)
    expect(hold.held).toBe(0)
    expect(partitionValues(broker, 'held')).toEqual(['before', 'held'])
  })

  it('adds latency to the answers it matches, and only those', { timeout: 30_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('slow', 1, {})
    await broker.createTopic('fast', 1, {})
    producer = newProducer(broker.bootstrapServers)
    await producer.send({ topic: 'slow', partition: 0, value: 'w' })
    await producer.send({ topic: 'fast', partition: 0, value: 'w' })
    const slow = broker.inject({ apiKey: 'Produce', topic: 'slow', latencyMs: 400 })
    let started = performance.now()
    await producer.send({ topic: 'slow', partition: 0, value: 'a' })
    expect(performance.now() - started).toBeGreaterThanOrEqual(400)
    await producer.send({ topic: 'fast', partition: 0, value: 'b' })
    expect(slow.hits).toBe(1)
  })

  it('clearInjections restores normal service: an error on every Produce, then none', { timeout: 30_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('cleared', 1, {})
    producer = newProducer(broker.bootstrapServers, { 'delivery.timeout.ms': 3000, 'request.timeout.ms': 1000 })
    await producer.send({ topic: 'cleared', partition: 0, value: 'w' })
    const always = broker.inject({ apiKey: 'Produce', error: 'NOT_LEADER_OR_FOLLOWER' })
    const held = broker.inject({ apiKey: 'Metadata', hold: true, times: 1 })
    const failing = producer.send({ topic: 'cleared', partition: 0, value: 'x' })
    // NOT_LEADER_OR_FOLLOWER sends the producer to refresh its metadata: that answer is held.
    await always.whenHit()
    await held.whenHit()
    expect(held.held).toBe(1)
    broker.clearInjections()
    // Retried against a broker that answers again: delivered, once.
    expect((await failing).offset).toBe(1n)
    await producer.send({ topic: 'cleared', partition: 0, value: 'y' })
    expect(partitionValues(broker, 'cleared')).toEqual(['w', 'x', 'y'])
    expect(held.held).toBe(0)
    const hits = always.hits
    await producer.send({ topic: 'cleared', partition: 0, value: 'z' })
    expect(always.hits).toBe(hits)
  })

  it('a seeded probability takes the same requests on every run', { timeout: 30_000 }, async () => {
    const takenWith = async (seed: number): Promise<number[]> => {
      const b = await startBroker({ faultInjection: true })
      try {
        await b.createTopic('coin', 1, {})
        const p = newProducer(b.bootstrapServers)
        try {
          await p.send({ topic: 'coin', partition: 0, value: 'w' })
          const rule = b.inject({ apiKey: 'Produce', latencyMs: 1, probability: 0.5, seed })
          const taken: number[] = []
          for (let i = 0; i < 20; i++) {
            const before = rule.hits
            await p.send({ topic: 'coin', partition: 0, value: `v${i}` })
            if (rule.hits > before) taken.push(i)
          }
          return taken
        } finally {
          await p.close()
        }
      } finally {
        await b.stop()
      }
    }
    const first = await takenWith(7)
    expect(first.length).toBeGreaterThan(0)
    expect(first.length).toBeLessThan(20)
    expect(await takenWith(7)).toEqual(first)
    expect(await takenWith(8)).not.toEqual(first)
  })

  it('refuses inject() on a broker started without faultInjection, and rules it cannot apply', async () => {
    broker = await startBroker()
    expect(() => broker!.inject({ apiKey: 'Produce', error: 'NOT_LEADER_OR_FOLLOWER' })).toThrow(FaultInjectionError)
    expect(() => broker!.clearInjections()).toThrow(expect.objectContaining({ code: 'FAULT_INJECTION_DISABLED' }))
    await broker.stop()
    // As the CLI starts it (Broker.start from the config): no way in either.
    broker = await startPlainBroker()
    expect(() => broker!.inject({ apiKey: 'Produce', latencyMs: 10 })).toThrow(expect.objectContaining({ code: 'FAULT_INJECTION_DISABLED' }))
    await broker.stop()
    broker = await startBroker({ faultInjection: true })
    const invalid = expect.objectContaining({ code: 'INVALID_FAULT_RULE' })
    expect(() => broker!.inject({ error: 'NOT_LEADER_OR_FOLLOWER' })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'Produce', error: 'NO_SUCH_ERROR' as 'NONE' })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'Produce', error: 'NONE' })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'NoSuchApi' as 'Produce', latencyMs: 1 })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'Produce' })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'Produce', close: true, error: 'REQUEST_TIMED_OUT' })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'Produce', latencyMs: 1, times: 0 })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'Produce', latencyMs: 1, probability: 2 })).toThrow(invalid)
    expect(() => broker!.inject({ apiKey: 'ApiVersions', error: 'REQUEST_TIMED_OUT' })).not.toThrow()
    // Waiting for hits that cannot come fails instead of hanging.
    const twice = broker.inject({ apiKey: 'Produce', latencyMs: 1, times: 2 })
    await expect(twice.whenHit(3)).rejects.toMatchObject({ code: 'INVALID_FAULT_RULE' })
    const waiting = twice.whenHit()
    broker.clearInjections()
    await expect(waiting).rejects.toMatchObject({ code: 'FAULT_RULE_REMOVED' })
    await expect(twice.whenHit()).rejects.toMatchObject({ code: 'FAULT_RULE_REMOVED' })
  })
})
