/**
 * kcat (librdkafka) as an idempotent producer (enable.idempotence=true): it asks InitProducerId,
 * sends batches with its producer id and sequences, and every record lands once, in order.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { runKcat } from '../helpers/kcat.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

const kcat = (args: string[], input?: string) => runKcat(broker!.port, args, input)

describe('kcat idempotent producer', () => {
  it('produces through InitProducerId with sequences, each record once', async () => {
    broker = await startBroker()
    await broker.createTopic('idem', 1, {})
    const lines = Array.from({ length: 500 }, (_, i) => `m${i}`)
    const produced = await kcat(['-P', '-t', 'idem', '-p', '0', '-X', 'enable.idempotence=true', '-X', 'linger.ms=5', '-X', 'batch.num.messages=50'], lines.join('\n') + '\n')
    expect(produced.status, produced.stderr).toBe(0)
    const log = broker.logManager.getLog('idem', 0)!
    const batches = log.readBatches(0n, { maxBytes: 10 * 1024 * 1024 })
    expect(batches.length).toBeGreaterThan(0)
    expect(batches.every((b) => b.producerId >= 0n && b.producerEpoch === 0)).toBe(true)
    expect(batches[0].baseSequence).toBe(0)
    expect(log.readRecords(0n, { maxBytes: 10 * 1024 * 1024 }).map((r) => r.value!.toString())).toEqual(lines)
  })
})
