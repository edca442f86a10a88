/**
 * Kafka's own clients against ferrolog's transaction coordinator: the Java producer in
 * transactional mode (__test__/interop/java/TxnProducer.java) committing, aborting, sending
 * offsets and being fenced; Kafka's `kafka-transactions.sh` (TransactionsCommand) listing and
 * describing transactions and producers; and the coordinator's state surviving a kill -9 of the
 * broker mid-transaction (the transaction is aborted by its timeout after the restart). The log
 * is read as READ_UNCOMMITTED: data batches, then the COMMIT or ABORT control batch.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { describeTransactionsCodec } from '../../ts/protocol/apis/describe-transactions.js'
import { decodeEndTransactionMarker } from '../../ts/protocol/control-record.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { createTopicOn, spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { fetchKafkaJars, runKafkaClass } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'
import { javaArgs, runJava } from '../helpers/java.js'

const TXN_PRODUCER = join(__dirname, 'java/TxnProducer.java')

let broker: Broker | undefined
let child: BrokerProcess | undefined
afterEach(async () => {
  await broker?.stop()
  await child?.stop()
  broker = child = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

/** A partition's log as values and markers ('COMMIT' / 'ABORT'), READ_UNCOMMITTED. */
function logContents(b: Broker, topic: string, partition: number): string[] {
  const log = b.logManager.getLog(topic, partition)!
  return log.readBatches(log.logStartOffset(), { isolation: 'LOG_END', maxBytes: 10 * 1024 * 1024 }).flatMap((batch) => {
    if (!batch.isControl) return batch.records.map((r) => r.value!.toString())
    const marker = decodeEndTransactionMarker(batch.records[0].key, batch.records[0].value)
    return [marker?.type ?? '?']
  })
}

async function until<T>(read: () => Promise<T> | T, ok: (v: T) => boolean, what: string, tries = 300): Promise<T> {
  let last: T | undefined
  for (let i = 0; i < tries; i++) {
    try {
      last = await read()
      if (ok(last)) return last
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}; last: ${String(last)}`)
}

/** kafka-transactions.sh (its options before the subcommand); its stdout, or throws with its output. */
async function transactionsTool(port: number, args: string[]): Promise<string> {
  const r = await runKafkaClass('org.apache.kafka.tools.TransactionsCommand', ['--bootstrap-server', `127.0.0.1:${port}`, ...args])
  if (r.status !== 0) throw new Error(`kafka-transactions.sh ${args.join(' ')}: ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

describe("Kafka's Java producer in transactional mode", () => {
  it('commits (records, offsets) and aborts: COMMIT and ABORT markers in each partition and in __consumer_offsets', { timeout: 120_000 }, async () => {
    broker = await startBroker()
    await broker.createTopic('jtx', 2, {})
    await broker.createTopic('jin', 1, {})
    const r = await runJava(TXN_PRODUCER, [`127.0.0.1:${broker.port}`, 'commit-abort', 'java-tx'], { timeoutMs: 90_000 })
    expect(r.stderr).not.toMatch(/Exception/)
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split('\n')).toEqual(['committed', 'aborted'])
    const b = broker
    await until(
      () => logContents(b, 'jtx', 1),
      (c) => c.length === 4,
      'jtx-1 complete',
    )
    expect(logContents(b, 'jtx', 0)).toEqual(['c1', 'c3', 'COMMIT', 'a1', 'ABORT'])
    expect(logContents(b, 'jtx', 1)).toEqual(['c2', 'COMMIT', 'a2', 'ABORT'])
    expect(logContents(b, '__consumer_offsets', b.groupCoordinator.partitionFor('jgroup')).filter((x) => x === 'COMMIT' || x === 'ABORT')).toEqual(['COMMIT'])
    expect(b.groupCoordinator.offsets.get('jgroup', 'jin', 0)?.offset).toBe(42n)
    await until(
      () => b.transactionCoordinator.describeTransactions(['java-tx'])[0].transactionState,
      (s) => s === 'CompleteAbort',
      'CompleteAbort',
    )

    // kafka-transactions.sh: list and describe at the coordinator, describe-producers at the leader.
    const listed = await transactionsTool(b.port, ['list'])
    expect(listed).toMatch(/java-tx\s+\d+\s+\d+\s+CompleteAbort/)
    const described = await transactionsTool(b.port, ['describe', '--transactional-id', 'java-tx'])
    expect(described).toMatch(/java-tx/)
    expect(described).toMatch(/CompleteAbort/)
    const producers = await transactionsTool(b.port, ['describe-producers', '--topic', 'jtx', '--partition', '0'])
    const producerId = String(b.transactionCoordinator.describeTransactions(['java-tx'])[0].producerId)
    expect(producers).toContain(producerId)
    // find-hanging: DescribeProducers of every partition the broker leads, then ListTransactions
    // and DescribeTransactions for their open transactions; every transaction here ended.
    const hanging = await transactionsTool(b.port, ['find-hanging', '--broker-id', String(b.config.nodeId)])
    expect(hanging.trim().split('\n')).toHaveLength(1)
    expect(hanging).toMatch(/^Topic\s+Partition\s+ProducerId/)
  })

  it('a second producer with the same transactional.id fences the first', { timeout: 120_000 }, async () => {
    broker = await startBroker()
    await broker.createTopic('jtx', 1, {})
    const r = await runJava(TXN_PRODUCER, [`127.0.0.1:${broker.port}`, 'fenced', 'java-fenced'], { timeoutMs: 90_000 })
    expect(r.status).toBe(0)
    expect(r.stdout.trim()).toMatch(/^fenced (ProducerFencedException|InvalidProducerEpochException)$/)
    expect(logContents(broker, 'jtx', 0)).toEqual(['zombie', 'ABORT', 'winner', 'COMMIT'])
  })
})

describe('the coordinator after a kill -9', () => {
  /** DescribeTransactions over a connection of its own: the state of one transactional id. */
  async function stateOf(port: number, transactionalId: string): Promise<string> {
    const c = await NetworkClient.connect(`127.0.0.1:${port}`)
    try {
      return (await c.send(describeTransactionsCodec, 0, { transactionalIds: [transactionalId] })).transactionStates[0].transactionState
    } finally {
      await c.close()
    }
  }

  it('a transaction left open when the broker died is aborted by its timeout after the restart', { timeout: 180_000 }, async () => {
    const dataDir = tempDir('ferrolog-txn-kill-')
    const props = { 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '200' }
    child = await spawnBroker({ dataDir, props })
    await createTopicOn(child.port, 'jtx', 1)
    // transaction.timeout.ms 15 s: long enough to outlive the kill and the restart on a busy machine.
    const producer = spawn('java', await javaArgs(TXN_PRODUCER, [`127.0.0.1:${child.port}`, 'open', 'killed-tx', '15000']), { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      let out = ''
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the Java producer did not open its transaction: ${out}`)), 90_000)
        producer.stdout!.on('data', (d: Buffer) => {
          out += d.toString()
          if (out.includes('open')) {
            clearTimeout(timer)
            resolve()
          }
        })
        producer.on('exit', (code) => reject(new Error(`the Java producer exited with ${code}: ${out}`)))
      })
    } finally {
      producer.kill('SIGKILL')
    }
    expect(await stateOf(child.port, 'killed-tx')).toBe('Ongoing')
    child.child.kill('SIGKILL')
    await child.stop()

    child = await spawnBroker({ dataDir, props })
    const port = child.port
    // Loaded Ongoing from __transaction_state, then aborted once its transaction.timeout.ms passed.
    const loaded = await stateOf(port, 'killed-tx')
    expect(['Ongoing', 'PrepareAbort', 'CompleteAbort']).toContain(loaded)
    await until(
      () => stateOf(port, 'killed-tx'),
      (s) => s === 'CompleteAbort',
      'the abort after the restart',
      600,
    )
    expect(await transactionsTool(port, ['describe', '--transactional-id', 'killed-tx'])).toMatch(/killed-tx\s+\d+\s+\d+\s+CompleteAbort/)
    await child.stop()
    child = undefined
    broker = await startBroker({ dataDir })
    expect(logContents(broker, 'jtx', 0)).toEqual(['left-open', 'ABORT'])
  })
})
