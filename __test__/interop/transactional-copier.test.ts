/**
 * Exactly-once across crashes (issue #15), with Kafka's own tools: TransactionalMessageCopier
 * copies 4,000 records in transactions of at most 50 with random aborts, SIGKILLed mid-copy three
 * times and with the broker SIGKILLed once; Kafka's Java consumer then reads the output
 * read_committed and sees every record exactly once, while read_uncommitted shows the aborted
 * copies the filter removed. Run against a real Apache Kafka broker as the reference for the
 * harness itself, and against ferrolog. `scripts/exactly-once-soak.mjs` runs many more kills.
 *
 * The copier's producer negotiates transaction version 2 (KIP-890 part 2, issue #27) with both:
 * every EndTxn it sends is v5, its Produce v12+ and TxnOffsetCommit v5+, and it sends no
 * AddPartitionsToTxn or AddOffsetsToTxn (the brokers add the partitions with the Produce and the
 * TxnOffsetCommit).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { runExactlyOnceCheck, type BrokerTarget } from '../helpers/exactly-once.js'
import { fetchKafkaJars } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const KAFKA = join(__dirname, '../../tools/kafka')
const t0 = Date.now()
/** CI's rounds; scripts/exactly-once-soak.mjs sets the EOS_* variables for long runs. */
const copierKills = Number(process.env.EOS_COPIER_KILLS ?? 3)
const brokerKills = Number(process.env.EOS_BROKER_KILLS ?? 1)
const OPTIONS = {
  // Each killed run commits a few hundred records at most: enough input that the copier is still copying at every kill.
  records: Math.max(4000, 400 * (copierKills + brokerKills)),
  copierKills,
  brokerKills,
  progressBeforeKill: 100,
  log: process.env.EOS_LOG ? (m: string) => console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s ${m}`) : undefined,
}

beforeAll(() => fetchKafkaJars(), 300_000)

let target: BrokerTarget | undefined
afterEach(async () => {
  await target?.stop()
  target = undefined
}, 90_000)

/** A ferrolog broker process; restarted on its port and data dir. */
async function ferrologTarget(): Promise<BrokerTarget> {
  const dataDir = tempDir('ferrolog-eos-')
  let broker: BrokerProcess = await spawnBroker({ dataDir })
  const port = broker.port
  return {
    bootstrap: `127.0.0.1:${port}`,
    async kill9() {
      broker.child.kill('SIGKILL')
      await broker.stop()
    },
    async restart() {
      broker = await spawnBroker({ dataDir, port })
    },
    stop: () => broker.stop(),
  }
}

/** Apache Kafka from tools/kafka (run-broker.sh), restarted on its ports and data dir. */
async function kafkaTarget(): Promise<BrokerTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'ferrolog-eos-kafka-'))
  const start = async (extra: string[]) => {
    const out = await runProcess('bash', [join(KAFKA, 'run-broker.sh'), '--data-dir', dir, ...extra], '', 120_000)
    if (out.status !== 0) throw new Error(`run-broker.sh: ${out.stdout}\n${out.stderr}`)
    return out.stdout
  }
  const first = await start([])
  const bootstrap = /bootstrap=(\S+)/.exec(first)![1]
  const controller = /controller=\S+:(\d+)/.exec(first)![1]
  const pid = () => Number(readFileSync(join(dir, 'broker.pid'), 'utf8'))
  return {
    bootstrap,
    async kill9() {
      const p = pid()
      process.kill(p, 'SIGKILL')
      for (let i = 0; i < 200; i++) {
        try {
          process.kill(p, 0)
        } catch {
          return
        }
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    async restart() {
      await start(['--port', bootstrap.split(':')[1], '--controller-port', controller])
    },
    async stop() {
      await runProcess('bash', [join(KAFKA, 'stop-broker.sh'), dir], '', 90_000)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

describe.each([
  ['Apache Kafka', kafkaTarget],
  ['ferrolog', ferrologTarget],
])('exactly once with TransactionalMessageCopier on %s', (_name, startTarget) => {
  it('every record once under read_committed, through copier and broker SIGKILLs', { timeout: 600_000 + 60_000 * (copierKills + brokerKills) }, async () => {
    target = await startTarget()
    const result = await runExactlyOnceCheck(target, OPTIONS)
    expect(result.committed.duplicated).toBe('[]')
    expect(result.committed.missing).toBe('[]')
    expect(result.committed.records).toBe(OPTIONS.records)
    expect(result.committed.distinct).toBe(OPTIONS.records)
    // Aborted copies exist (random aborts, kills mid-transaction) and read_committed hid them.
    expect(result.uncommitted.records).toBeGreaterThan(OPTIONS.records)
    // No transaction left open: the last stable offset reached the log end.
    expect(result.committed.end).toBe(result.uncommitted.end)
    expect(result.killsMidCopy).toBe(OPTIONS.copierKills + OPTIONS.brokerKills)
    // Transaction version 2 negotiated: EndTxn v5 only, Produce v12+, TxnOffsetCommit v5+, no
    // AddPartitionsToTxn / AddOffsetsToTxn.
    const versions = (api: string) =>
      Object.keys(result.requests)
        .filter((k) => k.startsWith(`${api} v`))
        .map((k) => Number(k.slice(api.length + 2)))
    expect(result.requests['END_TXN v5']).toBeGreaterThan(0)
    expect(versions('END_TXN')).toEqual([5])
    expect(versions('PRODUCE').length).toBeGreaterThan(0)
    expect(versions('PRODUCE').every((v) => v >= 12)).toBe(true)
    expect(versions('TXN_OFFSET_COMMIT').length).toBeGreaterThan(0)
    expect(versions('TXN_OFFSET_COMMIT').every((v) => v >= 5)).toBe(true)
    expect([...versions('ADD_PARTITIONS_TO_TXN'), ...versions('ADD_OFFSETS_TO_TXN')]).toEqual([])
  })
})
